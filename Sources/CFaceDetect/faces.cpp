// CFaceDetect: OpenCV's cascade detector and template tracker behind a C API (see include/CFaceDetect.h).
#include "CFaceDetect.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <new>
#include <vector>

struct cz_faces {
    cv::CascadeClassifier cascade;
    std::vector<cv::Rect> found;
};

struct cz_patch {
    cv::Mat picture;
    cv::Mat scores;
};

extern "C" cz_faces *cz_faces_new(const char *path) {
    try {
        cz_faces *f = new (std::nothrow) cz_faces();
        if (!f) return nullptr;
        if (!path || !f->cascade.load(path) || f->cascade.empty()) {
            delete f;
            return nullptr;
        }
        return f;
    } catch (...) {
        return nullptr;
    }
}

extern "C" void cz_faces_free(cz_faces *f) { delete f; }

extern "C" int cz_faces_detect(cz_faces *f, const uint8_t *plane, int width, int height, int stride, int min_size,
                               int *boxes, int max) {
    if (!f || !plane || width < 1 || height < 1 || stride < width || !boxes || max < 0) return -1;
    try {
        cv::Mat grey(height, width, CV_8UC1, const_cast<uint8_t *>(plane), (size_t)stride);
        f->found.clear();
        int side = std::max(8, min_size);
        f->cascade.detectMultiScale(grey, f->found, 1.1, 3, 0, cv::Size(side, side));
        std::sort(f->found.begin(), f->found.end(),
                  [](const cv::Rect &a, const cv::Rect &b) { return a.area() > b.area(); });
        int n = std::min((int)f->found.size(), max);
        for (int i = 0; i < n; i++) {
            boxes[4 * i] = f->found[i].x;
            boxes[4 * i + 1] = f->found[i].y;
            boxes[4 * i + 2] = f->found[i].width;
            boxes[4 * i + 3] = f->found[i].height;
        }
        return n;
    } catch (...) {
        return -1;
    }
}

extern "C" cz_patch *cz_patch_new(void) { return new (std::nothrow) cz_patch(); }

extern "C" void cz_patch_free(cz_patch *p) { delete p; }

extern "C" int cz_patch_set(cz_patch *p, const uint8_t *plane, int width, int height, int stride, const int box[4]) {
    if (!p || !plane || !box) return -1;
    try {
        cv::Rect r = cv::Rect(box[0], box[1], box[2], box[3]) & cv::Rect(0, 0, width, height);
        if (r.width < 4 || r.height < 4) return -1;
        cv::Mat grey(height, width, CV_8UC1, const_cast<uint8_t *>(plane), (size_t)stride);
        grey(r).copyTo(p->picture);
        return 0;
    } catch (...) {
        return -1;
    }
}

extern "C" double cz_patch_find(const cz_patch *p, const uint8_t *plane, int width, int height, int stride, double x,
                                double y, int radius, double out[2]) {
    if (!p || p->picture.empty() || !plane || !out) return -2;
    try {
        int pw = p->picture.cols, ph = p->picture.rows;
        int x0 = std::max(0, (int)std::floor(x) - radius), y0 = std::max(0, (int)std::floor(y) - radius);
        int x1 = std::min(width, (int)std::ceil(x) + radius + pw);
        int y1 = std::min(height, (int)std::ceil(y) + radius + ph);
        if (x1 - x0 < pw || y1 - y0 < ph) return -2;
        cv::Mat grey(height, width, CV_8UC1, const_cast<uint8_t *>(plane), (size_t)stride);
        cv::Mat area = grey(cv::Rect(x0, y0, x1 - x0, y1 - y0));
        cz_patch *q = const_cast<cz_patch *>(p);
        cv::matchTemplate(area, p->picture, q->scores, cv::TM_CCOEFF_NORMED);
        double best;
        cv::Point at;
        cv::minMaxLoc(q->scores, nullptr, &best, nullptr, &at);
        const cv::Mat &s = q->scores;
        double fx = 0, fy = 0;
        if (at.x > 0 && at.x + 1 < s.cols) {
            double l = s.at<float>(at.y, at.x - 1), c = s.at<float>(at.y, at.x), r = s.at<float>(at.y, at.x + 1);
            double d = l - 2 * c + r;
            if (d < 0) fx = std::max(-0.5, std::min(0.5, 0.5 * (l - r) / d));
        }
        if (at.y > 0 && at.y + 1 < s.rows) {
            double u = s.at<float>(at.y - 1, at.x), c = s.at<float>(at.y, at.x), b = s.at<float>(at.y + 1, at.x);
            double d = u - 2 * c + b;
            if (d < 0) fy = std::max(-0.5, std::min(0.5, 0.5 * (u - b) / d));
        }
        out[0] = x0 + at.x + fx;
        out[1] = y0 + at.y + fy;
        return std::isfinite(best) ? best : -1;
    } catch (...) {
        return -2;
    }
}

struct cz_compare {
    // Reused from frame to frame (cv::Mat::create keeps memory of the same size and type).
    cv::Mat sa, sb, d, ha, hb, diff, mask, labels, stats, centroids, kernel;
};

extern "C" cz_compare *cz_compare_new(void) {
    try {
        cz_compare *c = new (std::nothrow) cz_compare();
        if (c) c->kernel = cv::getStructuringElement(cv::MORPH_RECT, cv::Size(9, 9));
        return c;
    } catch (...) {
        return nullptr;
    }
}

extern "C" void cz_compare_free(cz_compare *c) { delete c; }

extern "C" int cz_frame_compare(cz_compare *c, const uint8_t *previous, const uint8_t *current, int width,
                                int height, int stride, double threshold, int region, cz_change *out) {
    if (!c || !previous || !current || !out || width < 8 || height < 8 || stride < width) return -1;
    try {
        cv::Mat a(height, width, CV_8UC1, const_cast<uint8_t *>(previous), (size_t)stride);
        cv::Mat b(height, width, CV_8UC1, const_cast<uint8_t *>(current), (size_t)stride);
        cv::resize(a, c->sa, cv::Size(32, 18), 0, 0, cv::INTER_AREA);
        cv::resize(b, c->sb, cv::Size(32, 18), 0, 0, cv::INTER_AREA);
        cv::absdiff(c->sa, c->sb, c->d);
        out->block_change = cv::mean(c->d)[0];
        int channels[] = {0}, bins[] = {32};
        float range[] = {0, 256};
        const float *ranges[] = {range};
        cv::calcHist(&a, 1, channels, cv::noArray(), c->ha, 1, bins, ranges);
        cv::calcHist(&b, 1, channels, cv::noArray(), c->hb, 1, bins, ranges);
        out->histogram = cv::compareHist(c->ha, c->hb, cv::HISTCMP_BHATTACHARYYA);
        cv::absdiff(a, b, c->diff);
        cv::blur(c->diff, c->diff, cv::Size(5, 5));
        cv::threshold(c->diff, c->mask, threshold, 255, cv::THRESH_BINARY);
        out->moved = cv::countNonZero(c->mask) / (double)(width * height);
        out->box[0] = out->box[1] = out->box[2] = out->box[3] = 0;
        if (!region) return 0;
        cv::morphologyEx(c->mask, c->mask, cv::MORPH_CLOSE, c->kernel);
        int n = cv::connectedComponentsWithStats(c->mask, c->labels, c->stats, c->centroids, 8, CV_32S);
        int best = 0, area = 0;
        for (int i = 1; i < n; i++) {
            if (c->stats.at<int>(i, cv::CC_STAT_AREA) > area) {
                area = c->stats.at<int>(i, cv::CC_STAT_AREA);
                best = i;
            }
        }
        if (best > 0) {
            out->box[0] = c->stats.at<int>(best, cv::CC_STAT_LEFT);
            out->box[1] = c->stats.at<int>(best, cv::CC_STAT_TOP);
            out->box[2] = c->stats.at<int>(best, cv::CC_STAT_WIDTH);
            out->box[3] = c->stats.at<int>(best, cv::CC_STAT_HEIGHT);
        }
        return 0;
    } catch (...) {
        return -1;
    }
}

