import ArgumentParser
import Testing

@testable import cropzoom

/// `CropZoom.namedSubcommands` spells the subcommands' names so that `cropzoom repair …` need not build every
/// command's configuration to find its own; the table must say what the commands say.
@Suite("Subcommand names")
struct CommandNameTests {
    @Test("the name table holds every subcommand but transcode, each under its own name")
    func tableMatchesTheCommands() {
        let declared = CropZoom.subcommands.dropFirst().map { $0._commandName }
        #expect(Set(CropZoom.namedSubcommands.keys) == Set(declared))
        #expect(CropZoom.namedSubcommands.count == declared.count)
        for (name, command) in CropZoom.namedSubcommands {
            #expect(command._commandName == name)
        }
    }

    @Test("a named subcommand parses as that command; the root's own requests and transcode are left to the root")
    func namedSubcommandParses() throws {
        let repair = try CropZoom.parseNamedSubcommand(["repair", "broken.mp4", "-o", "fixed.mp4", "--reference", "r"])
        #expect(repair is Repair)
        #expect(try CropZoom.parseNamedSubcommand(["repair", "--help"]) == nil)
        #expect(try CropZoom.parseNamedSubcommand(["in.mp4", "-o", "out.mp4"]) == nil)
        #expect(try CropZoom.parseNamedSubcommand(["recover", "."]) is Recover)
    }
}
