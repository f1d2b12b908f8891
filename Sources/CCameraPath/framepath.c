/*
 * The reframing path (issue 30, `--follow`): one axis of the window's position per frame, chosen as the L1 path of
 * the stabiliser (Grundmann et al., CVPR 2011: weighted L1 norms of the first to third differences: holds, constant
 * pans, eases) with the subject as the data:
 *
 *     minimise  w1 |D x|1 + w2 |D2 x|1 + w3 |D3 x|1
 *             + sum_t weight_t w_target max(0, |x_t - target_t| - dead_zone)      (follow, outside the dead zone)
 *             + sum_t w_inside (max(0, x_t - inside_hi_t) + max(0, inside_lo_t - x_t))   (the subject inside)
 *     subject to lo <= x_t <= hi (the window inside the picture), |x_{t+1} - x_t| <= max_speed dt,
 *                |x_{t+1} - 2 x_t + x_{t-1}| <= max_accel dt^2, no difference term or bound across a cut.
 *
 * Each hinge max(0, u) is |u| / 2 + u / 2: an L1 term and a linear one. Solved by the same log-barrier method as the
 * camera path (campath.c), on one unknown per frame: the Newton matrix is banded (half-bandwidth 3), a step O(n).
 *
 * A live path (nfix > 0, a receding horizon as cz_path_solve_after): the first nfix frames are shown already and
 * enter as constants; a bound that ties an unknown frame to a shown one becomes a steep hinge (FIX_PENALTY per px),
 * so that the start (every unknown frame where the last shown one is) is strictly inside what stays hard.
 */
#include "CCameraPath.h"
#include "band.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int k; int c[4]; double v[4]; double h, w; } fterm_t;   ///< w |v.x[c] - h|
typedef struct { int k; int c[3]; double v[3]; double u; } fineq_t;     ///< v.x[c] <= u

#define FKD 3
#define FIX_PENALTY 1e3

void cz_frame_defaults(cz_frame_problem *p) {
    memset(p, 0, sizeof *p);
    p->w1 = 10;
    p->w2 = 1;
    p->w3 = 100;
    p->w_target = 1;
    p->w_inside = 50;
}

static int cut_at(const cz_frame_problem *p, int t) { return p->cut && t > 0 && p->cut[t]; }

static double fdt(const cz_frame_problem *p, int t) {
    if (!p->duration) return 1.0 / 30;
    return p->duration[t] > 0 ? p->duration[t] : 1.0 / 30;
}

double cz_frame_cost(const cz_frame_problem *p, const double *x) {
    double cost = 0;
    double w[3] = {p->w1, p->w2, p->w3};
    static const double co[3][4] = {{-1, 1, 0, 0}, {1, -2, 1, 0}, {-1, 3, -3, 1}};
    for (int d = 1; d <= 3; d++)
        for (int t = 0; t + d < p->n; t++) {
            int ok = 1;
            for (int j = 1; j <= d; j++) if (cut_at(p, t + j)) ok = 0;
            if (!ok) continue;
            double s = 0;
            for (int j = 0; j <= d; j++) s += co[d - 1][j] * x[t + j];
            cost += w[d - 1] * fabs(s);
        }
    for (int t = 0; t < p->n; t++) {
        double wt = p->weight ? p->weight[t] : 1;
        if (p->target && !isnan(p->target[t]) && wt > 0)
            cost += wt * p->w_target * fmax(0, fabs(x[t] - p->target[t]) - p->dead_zone);
        if (p->inside_lo && !isnan(p->inside_lo[t])) cost += p->w_inside * fmax(0, p->inside_lo[t] - x[t]);
        if (p->inside_hi && !isnan(p->inside_hi[t])) cost += p->w_inside * fmax(0, x[t] - p->inside_hi[t]);
    }
    return cost;
}

struct cz_frame_work {
    int cap;
    fterm_t *T;
    fineq_t *Q;
    double *lin, *A, *A0, *dx, *g, *e, *de, *rr, *dr, *sl, *ds;
};

static int terms_for(int n) { return 3 * n + 4 * n + 32; }
static int bounds_for(int n) { return 2 * n + 2 * n + 2 * n + 8; }

cz_frame_work *cz_frame_work_new(int n) {
    if (n < 1) return NULL;
    cz_frame_work *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    size_t ct = (size_t)terms_for(n), cq = (size_t)bounds_for(n), d = sizeof(double);
    w->cap = n;
    w->T = malloc(ct * sizeof *w->T);
    w->Q = malloc(cq * sizeof *w->Q);
    w->lin = malloc((size_t)n * d);
    w->A = malloc((size_t)n * (FKD + 1) * d);
    w->A0 = malloc((size_t)n * (FKD + 1) * d);
    w->dx = malloc((size_t)n * d);
    w->g = malloc((size_t)n * d);
    w->e = malloc(ct * d);
    w->de = malloc(ct * d);
    w->rr = malloc(ct * d);
    w->dr = malloc(ct * d);
    w->sl = malloc(cq * d);
    w->ds = malloc(cq * d);
    if (!w->T || !w->Q || !w->lin || !w->A || !w->A0 || !w->dx || !w->g || !w->e || !w->de || !w->rr || !w->dr
        || !w->sl || !w->ds) {
        cz_frame_work_free(w);
        return NULL;
    }
    return w;
}

void cz_frame_work_free(cz_frame_work *w) {
    if (!w) return;
    free(w->T); free(w->Q); free(w->lin); free(w->A); free(w->A0); free(w->dx); free(w->g); free(w->e); free(w->de);
    free(w->rr); free(w->dr); free(w->sl); free(w->ds);
    free(w);
}

int cz_frame_solve(const cz_frame_problem *p, double *x, cz_path_stats *stats, cz_frame_work *work) {
    if (!p || !x || p->n < 1 || !(p->hi >= p->lo) || p->w1 < 0 || p->w2 < 0 || p->w3 < 0 || p->dead_zone < 0)
        return -1;
    if (!work || work->cap < p->n) return -1;
    int n = p->n;
    if (p->hi - p->lo < 1e-9) {
        for (int t = 0; t < n; t++) x[t] = p->lo;
        if (stats) memset(stats, 0, sizeof *stats);
        return 0;
    }
    fterm_t *T = work->T;
    fineq_t *Q = work->Q;
    double *lin = work->lin, *A = work->A, *A0 = work->A0, *dx = work->dx, *g = work->g;
    double *e = work->e, *de = work->de, *rr = work->rr, *dr = work->dr, *sl = work->sl, *ds = work->ds;
    memset(lin, 0, (size_t)n * sizeof(double));
    int rc = 0, nt = 0, nq = 0, newton = 0;
    double w[3] = {p->w1, p->w2, p->w3};
    static const double co[3][4] = {{-1, 1, 0, 0}, {1, -2, 1, 0}, {-1, 3, -3, 1}};
    const int nf = p->nfix > 0 && p->fixed ? (p->nfix < n ? p->nfix : n) : 0;
    const int nu = n - nf;   // unknowns: frames nf .. n-1 are x[nf + u]
    for (int t = 0; t < nf; t++) x[t] = p->fixed[t];
    if (nu == 0) goto done;
    // A term w |sum v_j x_{c_j} - h| over frames c_j: shown frames folded into h; nothing left unknown: a constant.
#define ADD_TERM(K, C, V, H, W)                                                                                    \
    do {                                                                                                           \
        fterm_t *q_ = &T[nt];                                                                                      \
        q_->k = 0; q_->h = (H); q_->w = (W);                                                                       \
        for (int j_ = 0; j_ < (K); j_++) {                                                                         \
            if ((C)[j_] < nf) q_->h -= (V)[j_] * p->fixed[(C)[j_]];                                                \
            else { q_->c[q_->k] = (C)[j_] - nf; q_->v[q_->k++] = (V)[j_]; }                                        \
        }                                                                                                          \
        if (q_->k > 0 && q_->w > 0) nt++;                                                                          \
    } while (0)
    for (int d = 1; d <= 3; d++) {
        if (w[d - 1] <= 0) continue;
        for (int t = 0; t + d < n; t++) {
            int ok = 1;
            for (int j = 1; j <= d; j++) if (cut_at(p, t + j)) ok = 0;
            if (!ok) continue;
            int c[4];
            for (int j = 0; j <= d; j++) c[j] = t + j;
            ADD_TERM(d + 1, c, co[d - 1], 0.0, w[d - 1]);
        }
    }
    // hinges: w max(0, x - a) = w/2 |x - a| + w/2 x (+ const); w max(0, a - x) = w/2 |x - a| - w/2 x
    for (int t = nf; t < n; t++) {
        int u = t - nf;
        double wt = p->weight ? p->weight[t] : 1;
        if (p->target && !isnan(p->target[t]) && wt > 0 && p->w_target > 0) {
            double ww = wt * p->w_target;
            T[nt].k = 1; T[nt].c[0] = u; T[nt].v[0] = 1; T[nt].h = p->target[t] + p->dead_zone; T[nt++].w = ww / 2;
            lin[u] += ww / 2;
            T[nt].k = 1; T[nt].c[0] = u; T[nt].v[0] = 1; T[nt].h = p->target[t] - p->dead_zone; T[nt++].w = ww / 2;
            lin[u] -= ww / 2;
        }
        if (p->w_inside > 0 && p->inside_hi && !isnan(p->inside_hi[t])) {
            T[nt].k = 1; T[nt].c[0] = u; T[nt].v[0] = 1; T[nt].h = p->inside_hi[t]; T[nt++].w = p->w_inside / 2;
            lin[u] += p->w_inside / 2;
        }
        if (p->w_inside > 0 && p->inside_lo && !isnan(p->inside_lo[t])) {
            T[nt].k = 1; T[nt].c[0] = u; T[nt].v[0] = 1; T[nt].h = p->inside_lo[t]; T[nt++].w = p->w_inside / 2;
            lin[u] -= p->w_inside / 2;
        }
    }
    // The window inside the picture; the speed and acceleration bounds (not across a cut): hard among unknown frames,
    // a steep hinge where a shown frame is in the row (v.x <= b: FIX_PENALTY max(0, v.x - b)).
#define ADD_ROW(K, C, V, U)                                                                                        \
    do {                                                                                                           \
        int shown_ = 0;                                                                                            \
        for (int j_ = 0; j_ < (K); j_++) if ((C)[j_] < nf) shown_ = 1;                                             \
        if (!shown_) {                                                                                             \
            fineq_t *r_ = &Q[nq++];                                                                                \
            r_->k = (K); r_->u = (U);                                                                              \
            for (int j_ = 0; j_ < (K); j_++) { r_->c[j_] = (C)[j_] - nf; r_->v[j_] = (V)[j_]; }                    \
        } else {                                                                                                   \
            int before_ = nt;                                                                                      \
            ADD_TERM(K, C, V, U, FIX_PENALTY / 2);                                                                 \
            if (nt > before_)                                                                                      \
                for (int j_ = 0; j_ < T[before_].k; j_++) lin[T[before_].c[j_]] += FIX_PENALTY / 2 * T[before_].v[j_]; \
        }                                                                                                          \
    } while (0)
    for (int t = 0; t < n; t++) {
        if (t >= nf) {
            Q[nq].k = 1; Q[nq].c[0] = t - nf; Q[nq].v[0] = 1; Q[nq++].u = p->hi;
            Q[nq].k = 1; Q[nq].c[0] = t - nf; Q[nq].v[0] = -1; Q[nq++].u = -p->lo;
        }
        if (p->max_speed > 0 && t + 1 < n && !cut_at(p, t + 1) && t + 1 >= nf) {
            double u = p->max_speed * fdt(p, t);
            int c[2] = {t + 1, t};
            double up[2] = {1, -1}, down[2] = {-1, 1};
            ADD_ROW(2, c, up, u);
            ADD_ROW(2, c, down, u);
        }
        if (p->max_accel > 0 && t >= 1 && t + 1 < n && !cut_at(p, t) && !cut_at(p, t + 1) && t + 1 >= nf) {
            double h = 0.5 * (fdt(p, t - 1) + fdt(p, t)), u = p->max_accel * h * h;
            int c[3] = {t - 1, t, t + 1};
            double up[3] = {1, -2, 1}, down[3] = {-1, 2, -1};
            ADD_ROW(3, c, up, u);
            ADD_ROW(3, c, down, u);
        }
    }
#undef ADD_ROW
#undef ADD_TERM
    // start: the middle of the picture's range (a live path: the last shown frame's place, just inside the range),
    // the same for every unknown frame (every hard bound strictly inside)
    double x0 = 0.5 * (p->lo + p->hi);
    if (nf > 0) {
        double eps = 1e-6 * (p->hi - p->lo);
        x0 = fmin(p->hi - eps, fmax(p->lo + eps, p->fixed[nf - 1]));
    }
    double *xu = x + nf;
    for (int u = 0; u < nu; u++) xu[u] = x0;
    double wsum = 0;
    for (int i = 0; i < nt; i++) {
        double ri = -T[i].h;
        for (int u = 0; u < T[i].k; u++) ri += T[i].v[u] * xu[T[i].c[u]];
        rr[i] = ri; e[i] = fabs(ri) + 1; wsum += T[i].w * e[i];
    }
    for (int j = 0; j < nq; j++) {
        sl[j] = Q[j].u;
        for (int u = 0; u < Q[j].k; u++) sl[j] -= Q[j].v[u] * xu[Q[j].c[u]];
    }
    double mtot = 2.0 * nt + nq, tb = mtot / (wsum > 0 ? wsum : 1);
    const int W = FKD + 1;
    for (int outer = 0; outer < 60; outer++) {
        for (int it = 0; it < 80; it++) {
            memset(A, 0, (size_t)nu * W * sizeof(double));
            memset(dx, 0, (size_t)nu * sizeof(double));
            for (int i = 0; i < nt; i++) {
                double a1 = 1 / (e[i] - rr[i]), a2 = 1 / (e[i] + rr[i]);
                double d1 = a1 * a1, d2 = a2 * a2, fe = tb * T[i].w - a1 - a2, fr = a1 - a2;
                double fee = d1 + d2, fer = d2 - d1, hs = 4 * d1 * d2 / fee, gs = fr - fer * fe / fee;
                const fterm_t *q = &T[i];
                for (int u = 0; u < q->k; u++) {
                    dx[q->c[u]] -= gs * q->v[u];
                    for (int v = 0; v < q->k; v++)
                        if (q->c[v] <= q->c[u]) A[q->c[u] * W + (q->c[u] - q->c[v])] += hs * q->v[u] * q->v[v];
                }
            }
            for (int j = 0; j < nq; j++) {
                double is = 1 / sl[j];
                const fineq_t *q = &Q[j];
                for (int u = 0; u < q->k; u++) {
                    dx[q->c[u]] -= is * q->v[u];
                    for (int v = 0; v < q->k; v++)
                        if (q->c[v] <= q->c[u]) A[q->c[u] * W + (q->c[u] - q->c[v])] += is * is * q->v[u] * q->v[v];
                }
            }
            for (int i = 0; i < nu; i++) dx[i] -= tb * lin[i];
            memcpy(g, dx, (size_t)nu * sizeof(double));
            double maxd = 0;
            for (int i = 0; i < nu; i++) { A[i * W] += 1e-12; if (A[i * W] > maxd) maxd = A[i * W]; }
            memcpy(A0, A, (size_t)nu * W * sizeof(double));
            double shift = 1e-14 * maxd;
            int tries = 0;
            while (cz_band_chol(A, nu, FKD)) {
                if (++tries > 12) { rc = -3; goto done; }
                memcpy(A, A0, (size_t)nu * W * sizeof(double));
                for (int i = 0; i < nu; i++) A[i * W] += shift;
                shift *= 10;
            }
            cz_band_solve(A, nu, dx, FKD);
            newton++;
            double lam2 = 0, amax = 1e300;
            for (int i = 0; i < nu; i++) lam2 += g[i] * dx[i];
            for (int i = 0; i < nt; i++) {
                const fterm_t *q = &T[i];
                double d = 0;
                for (int u = 0; u < q->k; u++) d += q->v[u] * dx[q->c[u]];
                dr[i] = d;
                double a1 = 1 / (e[i] - rr[i]), a2 = 1 / (e[i] + rr[i]);
                double d1 = a1 * a1, d2 = a2 * a2, fe = tb * T[i].w - a1 - a2, fee = d1 + d2, fer = d2 - d1;
                de[i] = -(fe + fer * d) / fee;
                lam2 += fe * fe / fee;
                double s1 = de[i] - d, s2 = de[i] + d;
                if (s1 < 0) { double a = -(e[i] - rr[i]) / s1; if (a < amax) amax = a; }
                if (s2 < 0) { double a = -(e[i] + rr[i]) / s2; if (a < amax) amax = a; }
            }
            for (int j = 0; j < nq; j++) {
                const fineq_t *q = &Q[j];
                double d = 0;
                for (int u = 0; u < q->k; u++) d += q->v[u] * dx[q->c[u]];
                ds[j] = -d;
                if (d > 0) { double a = sl[j] / d; if (a < amax) amax = a; }
            }
            if (lam2 < 1e-9) break;
            double alpha = amax < 1 ? 0.99 * amax : 1.0;
            double f0 = 0, fl = 0;
            for (int i = 0; i < nu; i++) { f0 += tb * lin[i] * xu[i]; fl += tb * lin[i] * dx[i]; }
            for (int i = 0; i < nt; i++) f0 += tb * T[i].w * e[i] - log(e[i] - rr[i]) - log(e[i] + rr[i]);
            for (int j = 0; j < nq; j++) f0 -= log(sl[j]);
            for (int ls = 0; ls < 60; ls++) {
                double f1 = 0;
                int bad = 0;
                for (int i = 0; i < nu; i++) f1 += tb * lin[i] * xu[i];
                f1 += alpha * fl;
                for (int i = 0; i < nt && !bad; i++) {
                    double ei = e[i] + alpha * de[i], ri = rr[i] + alpha * dr[i];
                    if (ei - ri <= 0 || ei + ri <= 0) bad = 1;
                    else f1 += tb * T[i].w * ei - log(ei - ri) - log(ei + ri);
                }
                for (int j = 0; j < nq && !bad; j++) {
                    double sj = sl[j] + alpha * ds[j];
                    if (sj <= 0) bad = 1; else f1 -= log(sj);
                }
                if (!bad && f1 <= f0 - 0.01 * alpha * lam2 * 0.5) break;
                if (!bad && ls > 40) break;
                alpha *= 0.5;
            }
            for (int i = 0; i < nu; i++) xu[i] += alpha * dx[i];
            for (int i = 0; i < nt; i++) { e[i] += alpha * de[i]; rr[i] += alpha * dr[i]; }
            for (int j = 0; j < nq; j++) sl[j] += alpha * ds[j];
            if (lam2 * 0.5 < 1e-7) break;
        }
        double obj = 0;
        for (int i = 0; i < nt; i++) obj += T[i].w * fabs(rr[i]);
        if (mtot / tb < 1e-7 * (obj > 1 ? obj : 1)) break;
        tb *= 50;
    }
    for (int t = 0; t < n; t++) x[t] = fmin(p->hi, fmax(p->lo, x[t]));
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->objective = cz_frame_cost(p, x);
        stats->iterations = newton;
        stats->windows = 1;
        stats->rows = 2 * nt + nq;
        stats->cols = nu + nt;
    }
done:
    return rc;
}
