import ArgumentParser
import Foundation

/// Which shard of how many this run is: `--shard I/N`, or `--shard auto` from the variables a scheduler sets in each
/// task of an array.
enum ShardIndex {
    /// The variables `--shard auto` reads, in this order: the first one set wins.
    static let variables = ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"]

    /// "I/N" or "auto" → (I, N), 1 ≤ I ≤ N. `count` is the number of shards when it is known otherwise (`--shards`,
    /// a manifest): with `auto` it is needed unless Slurm gives the count; with `I/N`, N must equal it.
    static func resolve(_ text: String, count: Int?, environment: [String: String]) throws -> (index: Int, count: Int) {
        if text != "auto" {
            let shard = try Batch.parseShard(text)
            if let count, count != shard.count {
                throw ValidationError("--shard \(text) is of \(shard.count) shards, but the batch has \(count)")
            }
            return shard
        }
        if let id = environment["SLURM_ARRAY_TASK_ID"] {
            // Slurm numbers tasks as the array says (--array=1-8); cropzoom's shards are 1…N, so the ID is taken as
            // the shard number and must be one. A task resubmitted alone (--array=3) has a count of 1: the count
            // then comes from --shards or the manifest.
            guard let index = Int(id) else { throw ValidationError("SLURM_ARRAY_TASK_ID is not a number ('\(id)')") }
            var n = count
            if n == nil {
                let slurmCount = environment["SLURM_ARRAY_TASK_COUNT"].flatMap { Int($0) }
                let low = environment["SLURM_ARRAY_TASK_MIN"].flatMap { Int($0) }
                let high = environment["SLURM_ARRAY_TASK_MAX"].flatMap { Int($0) }
                guard let slurmCount, low == 1, high == slurmCount else {
                    throw ValidationError(
                        "--shard auto: the Slurm array is not 1-N (tasks \(low.map(String.init) ?? "?")-"
                            + "\(high.map(String.init) ?? "?")): give the number of shards with --shards N")
                }
                n = slurmCount
            }
            return try checked(index, of: n!, from: "SLURM_ARRAY_TASK_ID=\(id)", hint: "number the array 1-N")
        }
        for name in variables.dropFirst() {
            guard let value = environment[name] else { continue }
            guard let zeroBased = Int(value) else { throw ValidationError("\(name) is not a number ('\(value)')") }
            guard let count else {
                throw ValidationError("--shard auto: \(name) gives no count of shards: add --shards N")
            }
            return try checked(zeroBased + 1, of: count, from: "\(name)=\(value)", hint: "it counts from 0")
        }
        throw ValidationError(
            "--shard auto: none of \(variables.joined(separator: ", ")) is set (not in a scheduler's array task)")
    }

    private static func checked(_ index: Int, of count: Int, from source: String, hint: String) throws -> (
        index: Int, count: Int
    ) {
        guard count >= 1, (1...count).contains(index) else {
            throw ValidationError("--shard auto: \(source) is not a shard of 1…\(count) (\(hint))")
        }
        return (index, count)
    }
}
