// dlib's HOG frontal face detector (Debian's libdlib-dev 19.24, `dlib::get_frontal_face_detector()`, compiled in,
// no model file) on grey PGM pictures, for Benchmarks/face_detectors.py (issue 30: measured before choosing).
//
// Build (one command line): g++ -O2 -std=c++14 -o Benchmarks/work/face_detectors_dlib
//     Benchmarks/face_detectors_dlib.cpp $(pkg-config --cflags --libs dlib-1)
// Usage: face_detectors_dlib [--upsample 0,1] [--speed FRAME.pgm] [--runs N] [--boxes] PICTURE.pgm|DIRECTORY ...
//
// For every picture (a directory stands for its *.pgm files, in name order) one line, a count per upsampling asked:
//     <path> TAB <faces at the first upsampling> TAB <faces at the second> ...
// dlib's window is 80x80, so at upsample 0 it finds faces from about 80 px; each upsampling doubles the picture
// first, as dlib's Python binding does (upsample 1: faces from about 40 px, about 4 times the work; 2: from 20 px).
// With --speed, the detector is timed on FRAME (median of N runs, 20 unless told, after one untimed) at each
// upsampling, the doubling included:
//     speed TAB <upsampling> TAB <ms> TAB <faces found on FRAME>
// The detector runs on the calling thread only (dlib's scan_fhog_pyramid does not spread over threads): there is no
// "every core" figure. --boxes adds each detection as x,y,w,h after the counts.
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <iostream>
#include <string>
#include <sys/stat.h>
#include <vector>

static bool read_pgm(const std::string &path, dlib::array2d<unsigned char> &img) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::string magic;
    in >> magic;
    if (magic != "P5") return false;
    long values[3];
    for (long &v : values) {
        in >> std::ws;
        while (in.peek() == '#') {  // comment lines
            std::string skip;
            std::getline(in, skip);
            in >> std::ws;
        }
        if (!(in >> v)) return false;
    }
    long width = values[0], height = values[1], maxval = values[2];
    if (width < 1 || height < 1 || maxval < 1 || maxval > 255) return false;
    in.get();  // the single whitespace before the samples
    img.set_size(height, width);
    for (long r = 0; r < height; r++)
        if (!in.read(reinterpret_cast<char *>(&img[r][0]), width)) return false;
    return true;
}

static std::vector<std::string> expand(const std::string &arg) {
    struct stat st;
    if (stat(arg.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return {arg};
    std::vector<std::string> names;
    if (DIR *d = opendir(arg.c_str())) {
        while (dirent *e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 4 && n.compare(n.size() - 4, 4, ".pgm") == 0) names.push_back(arg + "/" + n);
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// What dlib's Python binding does for `detector(img, upsample)`: the picture doubled `up` times (pyramid_up, part of
// the timed work), detected, the boxes brought back to the picture. (In C++ the detector's second argument is a
// threshold adjustment, not an upsampling.)
static std::vector<dlib::rectangle> detect(dlib::frontal_face_detector &detector,
                                           const dlib::array2d<unsigned char> &img, int up) {
    if (up == 0) return detector(img);
    dlib::pyramid_down<2> pyr;
    dlib::array2d<unsigned char> big;
    dlib::pyramid_up(img, big, pyr);
    for (int i = 1; i < up; i++) dlib::pyramid_up(big, pyr);
    std::vector<dlib::rectangle> found = detector(big);
    for (dlib::rectangle &r : found) r = pyr.rect_down(r, up);
    return found;
}

static void print_boxes(const std::vector<dlib::rectangle> &found) {
    for (const dlib::rectangle &r : found) std::cout << '\t' << r.left() << ',' << r.top() << ',' << r.width() << ','
                                                     << r.height();
}

int main(int argc, char **argv) {
    std::string speed_frame;
    std::vector<int> ups = {0, 1};
    int runs = 20;
    bool boxes = false;
    std::vector<std::string> pictures;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--speed" && i + 1 < argc) speed_frame = argv[++i];
        else if (a == "--runs" && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
        else if (a == "--upsample" && i + 1 < argc) {
            ups.clear();
            for (const char *p = argv[++i]; *p;) {
                char *end;
                long up = std::strtol(p, &end, 10);
                if (end == p || up < 0 || up > 4) {
                    std::cerr << "--upsample takes a list such as 0,1,2 (each 0 to 4)\n";
                    return 2;
                }
                ups.push_back((int)up);
                p = *end == ',' ? end + 1 : end;
            }
        } else if (a == "--boxes") boxes = true;
        else if (a == "-h" || a == "--help") {
            std::cerr << "usage: " << argv[0]
                      << " [--upsample 0,1] [--speed FRAME.pgm] [--runs N] [--boxes] PICTURE.pgm|DIRECTORY ...\n";
            return 0;
        } else {
            std::vector<std::string> more = expand(a);
            pictures.insert(pictures.end(), more.begin(), more.end());
        }
    }
    dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();
    dlib::array2d<unsigned char> img;
    for (const std::string &path : pictures) {
        if (!read_pgm(path, img)) {
            std::cerr << "cannot read " << path << " (binary 8-bit PGM expected)\n";
            return 1;
        }
        std::vector<std::vector<dlib::rectangle>> found;
        for (int up : ups) found.push_back(detect(detector, img, up));
        std::cout << path;
        for (const auto &f : found) std::cout << '\t' << f.size();
        if (boxes)
            for (size_t k = 0; k < ups.size(); k++) {
                std::cout << "\tup" << ups[k] << ':';
                print_boxes(found[k]);
            }
        std::cout << '\n';
    }
    if (!speed_frame.empty()) {
        if (!read_pgm(speed_frame, img)) {
            std::cerr << "cannot read " << speed_frame << " (binary 8-bit PGM expected)\n";
            return 1;
        }
        for (int up : ups) {
            size_t faces = detect(detector, img, up).size();  // warm-up, not timed
            std::vector<double> t;
            for (int k = 0; k < runs; k++) {
                auto t0 = std::chrono::steady_clock::now();
                std::vector<dlib::rectangle> found = detect(detector, img, up);
                auto t1 = std::chrono::steady_clock::now();
                t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
            }
            std::sort(t.begin(), t.end());
            double ms = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
            std::cout << "speed\t" << up << '\t' << ms << '\t' << faces << '\n';
        }
    }
    return 0;
}
