// CCameraPath: the L1-optimal camera path (see include/CCameraPath.h for the formulation and conventions).
#include "CCameraPath.h"
#include "band.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(CZ_PATH_GLPK)
#include <glpk.h>
#elif defined(CZ_PATH_CLP)
#include <coin/Clp_C_Interface.h>
#endif

/// A growing list of (row, col, value) triplets plus row and column data: the LP before the backend.
typedef struct {
    int nrows, ncols, nnz, caprow, capcol, capnz;
    int *ri, *ci; double *v;
    double *rlo, *rhi, *clo, *chi, *cost;
    int oom;
} lp_t;

static void *grow(void *ptr, int *cap, int need, size_t size, int *oom) {
    if (need <= *cap) return ptr;
    int c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(ptr, (size_t)c * size);
    if (!q) { *oom = 1; return ptr; }
    *cap = c;
    return q;
}

/// Adds a column with bounds and cost; returns its index.
static int add_col(lp_t *lp, double lo, double hi, double cost) {
    int c0 = lp->capcol, c1 = lp->capcol, c2 = lp->capcol;
    lp->clo = grow(lp->clo, &c0, lp->ncols + 1, sizeof(double), &lp->oom);
    lp->chi = grow(lp->chi, &c1, lp->ncols + 1, sizeof(double), &lp->oom);
    lp->cost = grow(lp->cost, &c2, lp->ncols + 1, sizeof(double), &lp->oom);
    if (lp->oom) return -1;
    lp->capcol = c0;
    lp->clo[lp->ncols] = lo; lp->chi[lp->ncols] = hi; lp->cost[lp->ncols] = cost;
    return lp->ncols++;
}

/// Adds a row lo <= sum v_k x_{c_k} <= hi (duplicate columns merged, zeros dropped); returns its index.
static int add_row(lp_t *lp, int k, int *c, double *v, double lo, double hi) {
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++)
            if (c[j] == c[i]) { v[i] += v[j]; v[j] = 0; }
    int r0 = lp->caprow, r1 = lp->caprow;
    lp->rlo = grow(lp->rlo, &r0, lp->nrows + 1, sizeof(double), &lp->oom);
    lp->rhi = grow(lp->rhi, &r1, lp->nrows + 1, sizeof(double), &lp->oom);
    int z0 = lp->capnz, z1 = lp->capnz, z2 = lp->capnz;
    lp->ri = grow(lp->ri, &z0, lp->nnz + k, sizeof(int), &lp->oom);
    lp->ci = grow(lp->ci, &z1, lp->nnz + k, sizeof(int), &lp->oom);
    lp->v = grow(lp->v, &z2, lp->nnz + k, sizeof(double), &lp->oom);
    if (lp->oom) return -1;
    lp->caprow = r0; lp->capnz = z0;
    for (int i = 0; i < k; i++) {
        if (v[i] == 0) continue;
        lp->ri[lp->nnz] = lp->nrows; lp->ci[lp->nnz] = c[i]; lp->v[lp->nnz] = v[i]; lp->nnz++;
    }
    lp->rlo[lp->nrows] = lo; lp->rhi[lp->nrows] = hi;
    return lp->nrows++;
}

static void lp_free(lp_t *lp) {
    free(lp->ri); free(lp->ci); free(lp->v); free(lp->rlo); free(lp->rhi);
    free(lp->clo); free(lp->chi); free(lp->cost);
    memset(lp, 0, sizeof *lp);
}

/// Solves min cost.x over the LP with the configured backend; x receives the columns. Returns the backend's
/// status (0 optimal), -3 if it failed; *obj the objective.
static int lp_solve(const lp_t *lp, double *x, double *obj) {
#ifdef CZ_PATH_GLPK
    glp_prob *g = glp_create_prob();
    glp_set_obj_dir(g, GLP_MIN);
    glp_add_rows(g, lp->nrows);
    glp_add_cols(g, lp->ncols);
    for (int i = 0; i < lp->nrows; i++) {
        double lo = lp->rlo[i], hi = lp->rhi[i];
        int t = (lo == hi) ? GLP_FX : (isinf(lo) && isinf(hi)) ? GLP_FR : isinf(lo) ? GLP_UP : isinf(hi) ? GLP_LO : GLP_DB;
        glp_set_row_bnds(g, i + 1, t, isinf(lo) ? 0 : lo, isinf(hi) ? 0 : hi);
    }
    for (int j = 0; j < lp->ncols; j++) {
        double lo = lp->clo[j], hi = lp->chi[j];
        int t = (lo == hi) ? GLP_FX : (isinf(lo) && isinf(hi)) ? GLP_FR : isinf(lo) ? GLP_UP : isinf(hi) ? GLP_LO : GLP_DB;
        glp_set_col_bnds(g, j + 1, t, isinf(lo) ? 0 : lo, isinf(hi) ? 0 : hi);
        glp_set_obj_coef(g, j + 1, lp->cost[j]);
    }
    int *ia = malloc(((size_t)lp->nnz + 1) * sizeof(int)), *ja = malloc(((size_t)lp->nnz + 1) * sizeof(int));
    double *ar = malloc(((size_t)lp->nnz + 1) * sizeof(double));
    if (!ia || !ja || !ar) { free(ia); free(ja); free(ar); glp_delete_prob(g); return -2; }
    for (int k = 0; k < lp->nnz; k++) { ia[k + 1] = lp->ri[k] + 1; ja[k + 1] = lp->ci[k] + 1; ar[k + 1] = lp->v[k]; }
    glp_load_matrix(g, lp->nnz, ia, ja, ar);
    free(ia); free(ja); free(ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.meth = GLP_DUALP;
    glp_term_out(GLP_OFF);
    glp_scale_prob(g, GLP_SF_AUTO);
    glp_term_out(GLP_ON);
    int rc = glp_simplex(g, &parm);
    int st = glp_get_status(g);
    int status = (rc == 0 && st == GLP_OPT) ? 0 : (rc == 0 && (st == GLP_NOFEAS || st == GLP_INFEAS)) ? 1 : -3;
    for (int j = 0; j < lp->ncols; j++) x[j] = glp_get_col_prim(g, j + 1);
    *obj = glp_get_obj_val(g);
    glp_delete_prob(g);
    return status;
#elif defined(CZ_PATH_CLP)
    // column-major copy
    int *start = calloc((size_t)lp->ncols + 1, sizeof(int));
    int *idx = malloc(((size_t)lp->nnz + 1) * sizeof(int));
    double *val = malloc(((size_t)lp->nnz + 1) * sizeof(double));
    int *fill = malloc(((size_t)lp->ncols + 1) * sizeof(int));
    if (!start || !idx || !val || !fill) { free(start); free(idx); free(val); free(fill); return -2; }
    for (int k = 0; k < lp->nnz; k++) start[lp->ci[k] + 1]++;
    for (int j = 0; j < lp->ncols; j++) start[j + 1] += start[j];
    memcpy(fill, start, (size_t)lp->ncols * sizeof(int));
    for (int k = 0; k < lp->nnz; k++) { int p = fill[lp->ci[k]]++; idx[p] = lp->ri[k]; val[p] = lp->v[k]; }
    free(fill);
    double *rlo = malloc((size_t)lp->nrows * sizeof(double)), *rhi = malloc((size_t)lp->nrows * sizeof(double));
    double *clo = malloc((size_t)lp->ncols * sizeof(double)), *chi = malloc((size_t)lp->ncols * sizeof(double));
    if (!rlo || !rhi || !clo || !chi) {
        free(start); free(idx); free(val); free(rlo); free(rhi); free(clo); free(chi); return -2;
    }
    for (int i = 0; i < lp->nrows; i++) {
        rlo[i] = isinf(lp->rlo[i]) ? -1e30 : lp->rlo[i]; rhi[i] = isinf(lp->rhi[i]) ? 1e30 : lp->rhi[i];
    }
    for (int j = 0; j < lp->ncols; j++) {
        clo[j] = isinf(lp->clo[j]) ? -1e30 : lp->clo[j]; chi[j] = isinf(lp->chi[j]) ? 1e30 : lp->chi[j];
    }
    Clp_Simplex *m = Clp_newModel();
    Clp_setLogLevel(m, 0);
    Clp_loadProblem(m, lp->ncols, lp->nrows, start, idx, val, clo, chi, lp->cost, rlo, rhi);
    free(start); free(idx); free(val); free(rlo); free(rhi); free(clo); free(chi);
    Clp_setOptimizationDirection(m, 1.0);
    // Measured on these LPs (Benchmarks/results/l1-solver.md): Clp's automatic scaling leaves 1e-4 relative
    // errors in the objective; unscaled with tolerances 1e-9 it agrees with GLPK to 1e-7; primal was faster.
    Clp_scaling(m, 0);
    Clp_setPrimalTolerance(m, 1e-9);
    Clp_setDualTolerance(m, 1e-9);
    Clp_primal(m, 0);
    int st = Clp_status(m);
    const double *sol = Clp_primalColumnSolution(m);
    for (int j = 0; j < lp->ncols; j++) x[j] = sol[j];
    *obj = Clp_objectiveValue(m);
    Clp_deleteModel(m);
    return st;
#else
    (void)lp; (void)x; (void)obj;
    return -3;   // built without an LP library: only the built-in solver
#endif
}

/// Per-frame quantities of the problem after defaults are applied.
typedef struct {
    double r;            ///< half diagonal: a, b are carried as r*a, r*b
    double wk[4];        ///< parameter weights
    double mean_dt;      ///< mean frame interval (the derivative unit)
    double w1, hold;
    double gap;          ///< the built-in solver stops when the duality gap bound is below gap * objective
} setup_t;

static double dt_of(const cz_path_problem *p, int t) {
    if (!p->duration) return 1.0;
    double d = p->duration[t];
    return d > 0 ? d : 1.0;
}

static int valid_of(const cz_path_problem *p, int t) { return !p->valid || p->valid[t]; }

static void setup(const cz_path_problem *p, setup_t *s) {
    s->gap = 1e-9;
    s->r = 0.5 * hypot(p->width, p->height);
    double aw = p->affine_weight > 0 ? p->affine_weight : CZ_PATH_AFFINE_WEIGHT;
    s->wk[0] = s->wk[1] = aw; s->wk[2] = s->wk[3] = 1.0;
    double sum = 0; int k = 0;
    for (int t = 0; t + 1 < p->n; t++) { sum += dt_of(p, t); k++; }
    s->mean_dt = k ? sum / k : 1.0;
    s->w1 = p->mode == 1 ? 10 * p->w1 : p->w1;
    s->hold = p->mode == 1 ? 0 : p->hold;
}

/// The terms of R_t (param k) = (F_{t+1} B_{t+1} - B_t)_k, with B's a, b scaled by r (cols at 4*(t - t0)).
/// Appends to (c, v); returns the constant.
static double r_terms(const cz_path_problem *p, int t, int t0, int k, double f, int *c, double *v, int *m) {
    const double *F = p->motion + 4 * (t + 1);
    double fa = F[0], fb = F[1];
    int n1 = 4 * (t + 1 - t0), n0 = 4 * (t - t0);
    int lin = k < 2 ? 0 : 2;
    if (k == 0 && p->area_weight > 0) {
        // The zoom free: its changes are the correction's own (a_{t+1} - a_t), so the camera's zoom is kept, not
        // cancelled by a counter-zoom.
        c[*m] = n1; v[(*m)++] = f;
        c[*m] = n0; v[(*m)++] = -f;
        return 0.0;
    }
    if (k == 0 || k == 2) { c[*m] = n1 + lin; v[(*m)++] = f * fa; c[*m] = n1 + lin + 1; v[(*m)++] = -f * fb; }
    else { c[*m] = n1 + lin; v[(*m)++] = f * fb; c[*m] = n1 + lin + 1; v[(*m)++] = f * fa; }
    c[*m] = n0 + k; v[(*m)++] = -f;
    return k == 2 ? f * F[2] : k == 3 ? f * F[3] : 0.0;
}

/// The coefficient of R_{t+j} in the d-th difference at t (d = 1..3, VFR-aware), and that term's cost weight.
static void diff_coefs(const cz_path_problem *p, const setup_t *s, int d, int t, double co[3], double *wt) {
    double h = s->mean_dt;
    double D0 = dt_of(p, t), D1 = d >= 2 ? dt_of(p, t + 1) : 0, D2 = d >= 3 ? dt_of(p, t + 2) : 0;
    double v0 = h / D0, v1 = d >= 2 ? h / D1 : 0, v2 = d >= 3 ? h / D2 : 0;
    if (d == 1) { co[0] = v0; co[1] = co[2] = 0; *wt = D0 / h; return; }
    double a0 = h / ((D0 + D1) / 2);                          // A_t = a0 (V_{t+1} - V_t)
    if (d == 2) { co[0] = -a0 * v0; co[1] = a0 * v1; co[2] = 0; *wt = (D0 + D1) / (2 * h); return; }
    double a1 = h / ((D1 + D2) / 2), j0 = h / D1;               // J_t = j0 (A_{t+1} - A_t)
    co[0] = j0 * (a0 * v0);
    co[1] = j0 * (-a1 * v1 - a0 * v1);
    co[2] = j0 * (a1 * v2);
    *wt = D1 / h;
}

/// The eight corner rows' coefficients on (a', b', tx, ty) and their bound, one-sided (<=). Returns 8.
static int corner_rows(double W, double H, double r, double co[8][4], double bound[8]) {
    double hw = W / 2, hh = H / 2;
    int k = 0;
    for (int sb = -1; sb <= 1; sb += 2) {
        // u max: tx + a hw - b cv (cv = -sb*hh) <= hw ; u min: -(tx - a hw - b cv) <= hw
        co[k][0] = hw / r; co[k][1] = sb * hh / r; co[k][2] = 1; co[k][3] = 0; bound[k++] = hw;
        co[k][0] = hw / r; co[k][1] = sb * hh / r; co[k][2] = -1; co[k][3] = 0; bound[k++] = hw;
        // v max: ty + a hh + b cu <= hh ; v min
        co[k][0] = hh / r; co[k][1] = sb * hw / r; co[k][2] = 0; co[k][3] = 1; bound[k++] = hh;
        co[k][0] = hh / r; co[k][1] = sb * hw / r; co[k][2] = 0; co[k][3] = -1; bound[k++] = hh;
    }
    return k;
}

/// Builds and solves the LP for frames [t0, t1); frames < t0 + nfix are fixed to B (already solved).
/// Writes B for [t0, t1). Returns the backend status or < 0.
static int solve_range(const cz_path_problem *p, const setup_t *s, int t0, int t1, int nfix, double *B,
                       cz_path_stats *st, int soft) {
    int n = t1 - t0;
    lp_t lp; memset(&lp, 0, sizeof lp);
    double z = p->crop, r = s->r;
    double crop_p[4] = {r / z, 0, 0, 0};
    // p columns
    for (int t = 0; t < n; t++)
        for (int k = 0; k < 4; k++) {
            double lo, hi;
            if (t < nfix) { lo = hi = (k < 2 ? r : 1) * B[4 * (t0 + t) + k]; }
            else if (k == 0) { lo = hi = r / z; }                 // the crop zoom is fixed
            else if (k == 1) { lo = -0.05 * r / z; hi = 0.05 * r / z; }
            else { lo = -INFINITY; hi = INFINITY; }
            add_col(&lp, lo, hi, 0);
        }
    int c[16]; double v[16];
    double ws[4] = {p->w1, p->w2, p->w3, 0};
    ws[0] = s->w1;
    for (int d = 1; d <= 3; d++) {
        if (ws[d - 1] <= 0) continue;
        for (int t = t0; t + d < t1; t++) {
            int ok = 1;
            for (int j = 0; j < d; j++) if (!valid_of(p, t + j + 1)) ok = 0;
            if (!ok) continue;
            double co[3], wt;
            diff_coefs(p, s, d, t, co, &wt);
            for (int k = 0; k < 4; k++) {
                int m = 0; double cst = 0;
                for (int j = 0; j < d; j++) cst += r_terms(p, t + j, t0, k, co[j], c, v, &m);
                double w = ws[d - 1] * s->wk[k] * wt;
                int ep = add_col(&lp, 0, INFINITY, w), em = add_col(&lp, 0, INFINITY, w);
                c[m] = ep; v[m++] = -1; c[m] = em; v[m++] = 1;
                add_row(&lp, m, c, v, -cst, -cst);
            }
        }
    }
    if (s->hold > 0)
        for (int t = nfix; t < n; t++)
            for (int k = 0; k < 4; k++) {
                double w = s->hold * s->wk[k] * dt_of(p, t0 + t);
                int hp = add_col(&lp, 0, INFINITY, w), hm = add_col(&lp, 0, INFINITY, w);
                int m = 0;
                c[m] = 4 * t + k; v[m++] = 1; c[m] = hp; v[m++] = -1; c[m] = hm; v[m++] = 1;
                add_row(&lp, m, c, v, crop_p[k], crop_p[k]);
            }
    double co[8][4], bd[8];
    corner_rows(p->width, p->height, r, co, bd);
    for (int t = nfix; t < n; t++) {
        int sc = soft ? add_col(&lp, 0, INFINITY, CZ_PATH_PENALTY) : -1;
        for (int i = 0; i < 8; i++) {
            int m = 0;
            for (int k = 0; k < 4; k++) if (co[i][k] != 0) { c[m] = 4 * t + k; v[m++] = co[i][k]; }
            if (soft) { c[m] = sc; v[m++] = -1; }
            add_row(&lp, m, c, v, -INFINITY, bd[i]);
        }
    }
    if (lp.oom) { lp_free(&lp); return -2; }
    double *x = malloc((size_t)lp.ncols * sizeof(double));
    if (!x) { lp_free(&lp); return -2; }
    double obj = 0;
    int rc = lp_solve(&lp, x, &obj);
    if (rc == 1 && !soft) {   // infeasible: the soft inclusion instead (always feasible)
        free(x); lp_free(&lp);
        return solve_range(p, s, t0, t1, nfix, B, st, 1);
    }
    if (st) {
        if (lp.nrows > st->rows) { st->rows = lp.nrows; st->cols = lp.ncols; st->nonzeros = lp.nnz; }
        st->lp_objective += obj; st->windows++; st->solver_status = rc;
    }
    if (rc >= 0)
        for (int t = nfix; t < n; t++)
            for (int k = 0; k < 4; k++) B[4 * (t0 + t) + k] = x[4 * t + k] / (k < 2 ? r : 1);
    free(x);
    lp_free(&lp);
    return rc;
}

/* ---------------------------------------------------------------------------------------------------------
 * The built-in solver: a log-barrier interior-point method on the path variables only. a is fixed (1/z), so
 * frame t has three unknowns (r*b, tx, ty); every L1 term |g.x - h| spans at most four consecutive frames and
 * every inclusion row one frame, so Newton's matrix (the slacks eliminated) is banded with half-bandwidth 11
 * and a step costs O(n). Always strictly feasible (B_t = crop is interior when z > 1).
 * ------------------------------------------------------------------------------------------------------- */

typedef struct { int k; int c[12]; double v[12]; double h, w; } l1term_t;       ///< w |v.x[c] - h|
typedef struct { int k; int c[4]; double v[4]; double u; } ineq_t;              ///< v.x[c] <= u

#define IPM_KD 11      ///< half-bandwidth, the zoom fixed (three unknowns a frame)
#define IPM_KD_ZOOM 13 ///< the zoom free (four unknowns a frame: a D3 term spans a_t .. b_{t+3}, tx_t .. ty_{t+3})

/// Maps a 4-per-frame column (a', b', tx, ty) of frame t (window-local) to a free variable, or folds it into
/// the constant: returns 1 if free (*var set), 0 if fixed (*val set).
/// With the zoom free (p->area_weight > 0) a' = r/crop + x_a: *val then receives the constant part r/crop too.
static int ipm_var(const cz_path_problem *p, const setup_t *s, int t0, int nfix, const double *B, int col,
                   int *var, double *val) {
    int t = col / 4, k = col % 4;
    if (t < nfix) { *val = (k < 2 ? s->r : 1) * B[4 * (t0 + t) + k]; return 0; }
    *val = 0;
    if (p->area_weight > 0) {
        if (k == 0) *val = s->r / p->crop;
        *var = 4 * (t - nfix) + k;
        return 1;
    }
    if (k == 0) { *val = s->r / p->crop; return 0; }
    *var = 3 * (t - nfix) + (k - 1);
    return 1;
}

/// Banded Cholesky in place (lower band of half-bandwidth kd, A[i*(kd+1)+d] = A(i, i-d)); returns 0, or -1 if not
/// positive.
int cz_band_chol(double *A, int n, int kd) {
    const int W = kd + 1;
    for (int i = 0; i < n; i++) {
        int j0 = i - kd < 0 ? 0 : i - kd;
        for (int j = j0; j <= i; j++) {
            double sum = A[i * W + (i - j)];
            int k0 = (i - kd > j - kd ? i - kd : j - kd);
            if (k0 < 0) k0 = 0;
            for (int k = k0; k < j; k++) sum -= A[i * W + (i - k)] * A[j * W + (j - k)];
            if (j == i) {
                if (!(sum > 0)) return -1;
                A[i * W] = sqrt(sum);
            } else A[i * W + (i - j)] = sum / A[j * W];
        }
    }
    return 0;
}

void cz_band_solve(const double *A, int n, double *x, int kd) {
    const int W = kd + 1;
    for (int i = 0; i < n; i++) {
        double sum = x[i];
        for (int k = (i - kd < 0 ? 0 : i - kd); k < i; k++) sum -= A[i * W + (i - k)] * x[k];
        x[i] = sum / A[i * W];
    }
    for (int i = n - 1; i >= 0; i--) {
        double sum = x[i];
        for (int k = i + 1; k <= (i + kd < n - 1 ? i + kd : n - 1); k++) sum -= A[k * W + (k - i)] * x[k];
        x[i] = sum / A[i * W];
    }
}

/// Solves frames [t0, t1) (the first nfix fixed to B) with the barrier method; writes B. Returns 0, or -2/-3.
/// The barrier method's arrays for windows of up to `cap` frames (made once for a live path, or per solve).
struct cz_path_workspace {
    int cap;
    l1term_t *T; ineq_t *Q;
    double *x, *dx, *xn, *lin, *A, *A0, *e, *de, *rr, *dr, *sl, *ds, *qw;
};

void cz_path_workspace_free(cz_path_workspace *w) {
    if (!w) return;
    free(w->qw); free(w->T); free(w->Q); free(w->x); free(w->dx); free(w->xn); free(w->lin); free(w->A); free(w->A0); free(w->e);
    free(w->de); free(w->rr); free(w->dr); free(w->sl); free(w->ds);
    free(w);
}

cz_path_workspace *cz_path_workspace_new(int frames) {
    if (frames < 1) return NULL;
    cz_path_workspace *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    int n = frames, nv = 4 * n, cap_l1 = 12 * n + 4 * n + 16, cap_in = 14 * n + 16;
    w->cap = n;
    w->T = malloc((size_t)cap_l1 * sizeof *w->T);
    w->Q = malloc((size_t)cap_in * sizeof *w->Q);
    w->x = malloc((size_t)nv * sizeof(double)); w->dx = malloc((size_t)nv * sizeof(double));
    w->lin = malloc((size_t)nv * sizeof(double));
    w->xn = malloc((size_t)nv * sizeof(double)); w->A = malloc((size_t)nv * (IPM_KD_ZOOM + 1) * sizeof(double));
    w->A0 = malloc((size_t)nv * (IPM_KD_ZOOM + 1) * sizeof(double));
    w->e = malloc((size_t)cap_l1 * sizeof(double)); w->de = malloc((size_t)cap_l1 * sizeof(double));
    w->rr = malloc((size_t)cap_l1 * sizeof(double)); w->dr = malloc((size_t)cap_l1 * sizeof(double));
    w->sl = malloc((size_t)cap_in * sizeof(double)); w->ds = malloc((size_t)cap_in * sizeof(double));
    w->qw = malloc((size_t)cap_l1 * sizeof(double));
    if (!w->qw || !w->T || !w->Q || !w->x || !w->dx || !w->xn || !w->lin || !w->A || !w->A0 || !w->e || !w->de || !w->rr ||
        !w->dr || !w->sl || !w->ds) { cz_path_workspace_free(w); return NULL; }
    return w;
}

/// The most a' (= r a) may grow from frame t to t+1 under zoom_rate (0 without): zoom_rate a'_min per second of frame
/// t's duration (without durations a frame is 1/30 s).
static double zoom_step(const cz_path_problem *p, const setup_t *s, double a_min, int t) {
    if (p->zoom_rate <= 0) return 0;
    return p->zoom_rate * a_min * (p->duration ? dt_of(p, t) : dt_of(p, t) / (s->mean_dt * 30));
}

/// Solves frames [t0, t1) (the first nfix fixed to B) with the barrier method; writes B. Returns 0, or -2/-3.
/// `ws`: arrays for at least t1 - t0 frames, or NULL (made and freed here).
static int ipm_range(const cz_path_problem *p, const setup_t *s, int t0, int t1, int nfix, double *B,
                     cz_path_stats *st, cz_path_workspace *work) {
    const int vz = p->area_weight > 0;            // the zoom free
    const int nf = vz ? 4 : 3, kd = vz ? IPM_KD_ZOOM : IPM_KD;
    int n = t1 - t0, nv = nf * (n - nfix);
    if (nv <= 0) return 0;
    double z = p->crop, r = s->r;
    if (z <= 1 + 1e-12) {   // no room: the window is the frame
        for (int t = t0 + nfix; t < t1; t++) { B[4 * t] = 1; B[4 * t + 1] = B[4 * t + 2] = B[4 * t + 3] = 0; }
        return 0;
    }
    cz_path_workspace *own = NULL;
    if (!work || work->cap < n) {
        if (work) return -1;
        work = own = cz_path_workspace_new(n);
        if (!work) return -2;
    }
    int cap_l1 = 12 * n + 4 * n + 16;
    l1term_t *T = work->T;
    ineq_t *Q = work->Q;
    double *x = work->x, *dx = work->dx, *xn = work->xn, *A = work->A, *A0 = work->A0, *e = work->e;
    double *de = work->de, *rr = work->rr, *dr = work->dr, *sl = work->sl, *ds = work->ds;
    double *qw = work->qw;   // per term: the weight of its square (smooth2), or 0
    memset(x, 0, (size_t)nv * sizeof(double));
    memset(qw, 0, (size_t)cap_l1 * sizeof(double));
    int rc = 0;
    int nt = 0, nq = 0;
    int c[16]; double v[16];
    double ws[3] = {s->w1, p->w2, p->w3};
    // the L1 terms
    for (int d = 1; d <= 3; d++) {
        if (ws[d - 1] <= 0) continue;
        for (int t = t0; t + d < t1; t++) {
            int ok = 1;
            for (int j = 0; j < d; j++) if (!valid_of(p, t + j + 1)) ok = 0;
            if (!ok || t + d < t0 + nfix) continue;   // all fixed: a constant
            double co[3], wt;
            diff_coefs(p, s, d, t, co, &wt);
            for (int k = 0; k < 4; k++) {
                int m = 0; double cst = 0;
                for (int j = 0; j < d; j++) cst += r_terms(p, t + j, t0, k, co[j], c, v, &m);
                double zw = (k == 0 && vz && p->zoom_weight > 0) ? p->zoom_weight : 1;
                l1term_t *q = &T[nt]; q->k = 0; q->h = -cst; q->w = ws[d - 1] * s->wk[k] * wt * zw;
                for (int i = 0; i < m; i++) {
                    int var; double val;
                    if (ipm_var(p, s, t0, nfix, B, c[i], &var, &val)) {
                        q->h -= v[i] * val;
                        int f = -1;
                        for (int u = 0; u < q->k; u++) if (q->c[u] == var) f = u;
                        if (f >= 0) q->v[f] += v[i]; else { q->c[q->k] = var; q->v[q->k++] = v[i]; }
                    } else q->h -= v[i] * val;
                }
                if (q->k > 0 && q->w > 0) {
                    if (d == 2) qw[nt] = p->smooth2 * s->wk[k] * wt * zw;
                    nt++;
                }
            }
        }
    }
    if (s->hold > 0)
        for (int t = nfix; t < n; t++)
            for (int k = 1; k < 4; k++) {
                l1term_t *q = &T[nt++];
                q->k = 1; q->c[0] = nf * (t - nfix) + k - (vz ? 0 : 1); q->v[0] = 1; q->h = 0;
                q->w = s->hold * s->wk[k] * dt_of(p, t0 + t);
            }
    double co8[8][4], bd[8];
    corner_rows(p->width, p->height, r, co8, bd);
    // the last fixed frame's x_a (a' - r/z), and the start of the unknown ones: it, short of the bound zoom 1 by less
    // than the speed bound's step (so both hold strictly)
    double prev = vz && nfix > 0 ? fmax(0, r * B[4 * (t0 + nfix - 1)] - r / z) : 0;
    double step = nfix > 0 ? zoom_step(p, s, r / z, t0 + nfix - 1) : 0;
    double x0 = fmin(prev, (r - r / z) - (step > 0 ? 0.5 * fmin(step, r - r / z) : 1e-3 * (r - r / z)));
    for (int t = nfix; t < n; t++) {
        if (vz) {   // x_a, b', tx, ty: a' = r/z + x_a, 0 <= x_a <= r - r/z (the zoom between 1 and z), |b'| <= 0.05 a'
            int a0 = 4 * (t - nfix);
            for (int i = 0; i < 8; i++) {
                ineq_t *q = &Q[nq++];
                q->k = 4;
                for (int u = 0; u < 4; u++) { q->c[u] = a0 + u; q->v[u] = co8[i][u]; }
                q->u = bd[i] - co8[i][0] * r / z;
            }
            Q[nq].k = 1; Q[nq].c[0] = a0; Q[nq].v[0] = -1; Q[nq++].u = 1e-7 * r;
            Q[nq].k = 1; Q[nq].c[0] = a0; Q[nq].v[0] = 1; Q[nq++].u = r - r / z;
            Q[nq].k = 2; Q[nq].c[0] = a0 + 1; Q[nq].v[0] = 1; Q[nq].c[1] = a0; Q[nq].v[1] = -0.05; Q[nq++].u = 0.05 * r / z;
            Q[nq].k = 2; Q[nq].c[0] = a0 + 1; Q[nq].v[0] = -1; Q[nq].c[1] = a0; Q[nq].v[1] = -0.05; Q[nq++].u = 0.05 * r / z;
            if (p->zoom_rate > 0 && t > 0) {
                // a'_t - a'_{t-1} <= zoom_rate (r / z) dt, and CZ_PATH_ZOOM_IN_FACTOR times that the other way: the
                // zoom's speed bounded (relative: a' >= r / z); against a fixed frame (a live path's last shown one) a
                // bound on x_a alone
                double u = zoom_step(p, s, r / z, t0 + t - 1);
                if (t > nfix) {
                    Q[nq].k = 2; Q[nq].c[0] = a0; Q[nq].v[0] = 1; Q[nq].c[1] = a0 - 4; Q[nq].v[1] = -1; Q[nq++].u = u;
                    Q[nq].k = 2; Q[nq].c[0] = a0; Q[nq].v[0] = -1; Q[nq].c[1] = a0 - 4; Q[nq].v[1] = 1;
                    Q[nq++].u = CZ_PATH_ZOOM_IN_FACTOR * u;
                } else {
                    Q[nq].k = 1; Q[nq].c[0] = a0; Q[nq].v[0] = 1; Q[nq++].u = prev + u;
                    Q[nq].k = 1; Q[nq].c[0] = a0; Q[nq].v[0] = -1; Q[nq++].u = CZ_PATH_ZOOM_IN_FACTOR * u - prev;
                }
            }
            continue;
        }
        int b0 = 3 * (t - nfix);
        for (int i = 0; i < 8; i++) {
            ineq_t *q = &Q[nq++];
            q->k = 3; q->c[0] = b0; q->c[1] = b0 + 1; q->c[2] = b0 + 2;
            q->v[0] = co8[i][1]; q->v[1] = co8[i][2]; q->v[2] = co8[i][3];
            q->u = bd[i] - co8[i][0] * r / z;
        }
        Q[nq].k = 1; Q[nq].c[0] = b0; Q[nq].v[0] = 1; Q[nq++].u = 0.05 * r / z;
        Q[nq].k = 1; Q[nq].c[0] = b0; Q[nq].v[0] = -1; Q[nq++].u = 0.05 * r / z;
    }
    // the reward for a smaller zoom: -area_weight * dt per px of x_a (a linear term of the objective)
    double *lin = work->lin;
    memset(lin, 0, (size_t)nv * sizeof(double));
    if (vz)
        for (int t = nfix; t < n; t++) lin[4 * (t - nfix)] = -p->area_weight * dt_of(p, t0 + t) / s->mean_dt;
    // start: B = crop (x = 0), strictly inside; with the zoom free after fixed frames, every unknown frame at the last
    // fixed frame's zoom (just short of 1: strictly inside), so the speed bound against it holds; e = |r| + 1
    if (vz && nfix > 0 && x0 > 0)
        for (int t = nfix; t < n; t++) x[4 * (t - nfix)] = x0;
    double wsum = 0;
    for (int i = 0; i < nt; i++) {
        double ri = -T[i].h;
        for (int u = 0; u < T[i].k; u++) ri += T[i].v[u] * x[T[i].c[u]];
        rr[i] = ri; e[i] = fabs(ri) + 1; wsum += T[i].w * e[i];
    }
    for (int j = 0; j < nq; j++) {
        sl[j] = Q[j].u;
        for (int u = 0; u < Q[j].k; u++) sl[j] -= Q[j].v[u] * x[Q[j].c[u]];
    }
    double mtot = 2.0 * nt + nq;
    double tb = mtot / (wsum > 0 ? wsum : 1);
    int newton = 0;
    for (int outer = 0; outer < 60; outer++) {
        for (int it = 0; it < 80; it++) {
            // Newton system in x (slacks e eliminated)
            memset(A, 0, (size_t)nv * (kd + 1) * sizeof(double));
            memset(dx, 0, (size_t)nv * sizeof(double));   // holds -gradient (reduced)
            for (int i = 0; i < nt; i++) {
                double a1 = 1 / (e[i] - rr[i]), a2 = 1 / (e[i] + rr[i]);
                double d1 = a1 * a1, d2 = a2 * a2;
                double fe = tb * T[i].w - a1 - a2, fr = a1 - a2;
                double fee = d1 + d2, fer = d2 - d1;
                double hs = 4 * d1 * d2 / fee;                // = fee - fer^2 / fee, without the cancellation
                double gs = fr - fer * fe / fee;              // reduced gradient along g
                const l1term_t *q = &T[i];
                if (qw[i] > 0) {   // tb * qw * r^2: gradient 2 tb qw r v, Hessian 2 tb qw v v'
                    gs += 2 * tb * qw[i] * rr[i];
                    hs += 2 * tb * qw[i];
                }
                for (int u = 0; u < q->k; u++) {
                    dx[q->c[u]] -= gs * q->v[u];
                    for (int w = 0; w < q->k; w++)
                        if (q->c[w] <= q->c[u]) A[q->c[u] * (kd + 1) + (q->c[u] - q->c[w])] += hs * q->v[u] * q->v[w];
                }
            }
            for (int j = 0; j < nq; j++) {
                double is = 1 / sl[j];
                const ineq_t *q = &Q[j];
                for (int u = 0; u < q->k; u++) {
                    dx[q->c[u]] -= is * q->v[u];
                    for (int w = 0; w < q->k; w++)
                        if (q->c[w] <= q->c[u]) A[q->c[u] * (kd + 1) + (q->c[u] - q->c[w])] += is * is * q->v[u] * q->v[w];
                }
            }
            if (vz) for (int i = 0; i < nv; i++) dx[i] -= tb * lin[i];
            double gnorm = 0;
            for (int i = 0; i < nv; i++) { A[i * (kd + 1)] += 1e-12; gnorm += dx[i] * dx[i]; }
            double *g = xn; memcpy(g, dx, (size_t)nv * sizeof(double));
            // factor; when rounding breaks positiveness (terms at zero residual weigh ~1/e^2), shift the diagonal
            memcpy(A0, A, (size_t)nv * (kd + 1) * sizeof(double));
            double maxd = 0;
            for (int i = 0; i < nv; i++) if (A[i * (kd + 1)] > maxd) maxd = A[i * (kd + 1)];
            double shift = 1e-14 * maxd;
            int tries = 0;
            while (cz_band_chol(A, nv, kd)) {
                if (++tries > 12) { rc = -3; goto done; }
                memcpy(A, A0, (size_t)nv * (kd + 1) * sizeof(double));
                for (int i = 0; i < nv; i++) A[i * (kd + 1)] += shift;
                shift *= 10;
            }
            cz_band_solve(A, nv, dx, kd);
            newton++;
            // slack directions
            double lam2 = 0;
            for (int i = 0; i < nv; i++) lam2 += g[i] * dx[i];
            double amax = 1e300;
            for (int i = 0; i < nt; i++) {
                const l1term_t *q = &T[i];
                double d = 0;
                for (int u = 0; u < q->k; u++) d += q->v[u] * dx[q->c[u]];
                dr[i] = d;
                double a1 = 1 / (e[i] - rr[i]), a2 = 1 / (e[i] + rr[i]);
                double d1 = a1 * a1, d2 = a2 * a2, fe = tb * T[i].w - a1 - a2, fee = d1 + d2, fer = d2 - d1;
                de[i] = -(fe + fer * d) / fee;
                lam2 += fe * fe / fee;                         // the e part of the decrement (approx.)
                double s1 = de[i] - d, s2 = de[i] + d;         // (e - r), (e + r) change
                if (s1 < 0) { double a = -(e[i] - rr[i]) / s1; if (a < amax) amax = a; }
                if (s2 < 0) { double a = -(e[i] + rr[i]) / s2; if (a < amax) amax = a; }
            }
            for (int j = 0; j < nq; j++) {
                const ineq_t *q = &Q[j];
                double d = 0;
                for (int u = 0; u < q->k; u++) d += q->v[u] * dx[q->c[u]];
                ds[j] = -d;
                if (d > 0) { double a = sl[j] / d; if (a < amax) amax = a; }
            }
            if (lam2 < 1e-9) break;
            double alpha = amax < 1 ? 0.99 * amax : 1.0;
            // backtracking on the barrier function
            double f0 = 0, fl = 0;
            if (vz) for (int i = 0; i < nv; i++) { f0 += tb * lin[i] * x[i]; fl += tb * lin[i] * dx[i]; }
            for (int i = 0; i < nt; i++)
                f0 += tb * (T[i].w * e[i] + qw[i] * rr[i] * rr[i]) - log(e[i] - rr[i]) - log(e[i] + rr[i]);
            for (int j = 0; j < nq; j++) f0 -= log(sl[j]);
            for (int ls = 0; ls < 60; ls++) {
                double f1 = 0; int bad = 0;
                if (vz) { for (int i = 0; i < nv; i++) f1 += tb * lin[i] * x[i]; f1 += alpha * fl; }
                for (int i = 0; i < nt && !bad; i++) {
                    double ei = e[i] + alpha * de[i], ri = rr[i] + alpha * dr[i];
                    if (ei - ri <= 0 || ei + ri <= 0) bad = 1;
                    else f1 += tb * (T[i].w * ei + qw[i] * ri * ri) - log(ei - ri) - log(ei + ri);
                }
                for (int j = 0; j < nq && !bad; j++) {
                    double sj = sl[j] + alpha * ds[j];
                    if (sj <= 0) bad = 1; else f1 -= log(sj);
                }
                if (!bad && f1 <= f0 - 0.01 * alpha * lam2 * 0.5) break;
                if (!bad && ls > 40) break;
                alpha *= 0.5;
            }
            for (int i = 0; i < nv; i++) x[i] += alpha * dx[i];
            for (int i = 0; i < nt; i++) { e[i] += alpha * de[i]; rr[i] += alpha * dr[i]; }
            for (int j = 0; j < nq; j++) sl[j] += alpha * ds[j];
            if (lam2 * 0.5 < 1e-7) break;
        }
        double obj = 0;
        for (int i = 0; i < nt; i++) obj += T[i].w * fabs(rr[i]) + qw[i] * rr[i] * rr[i];
        if (mtot / tb < s->gap * (obj > 1 ? obj : 1)) break;
        tb *= 50;
    }
    // recompute r exactly from x (drift)
    for (int t = nfix; t < n; t++) {
        if (vz) {
            const double *xv = x + 4 * (t - nfix);
            // x_a >= -1e-7 r in the barrier (x = 0 its start): clamped, so the zoom never exceeds crop
            B[4 * (t0 + t)] = (r / z + fmax(0, xv[0])) / r; B[4 * (t0 + t) + 1] = xv[1] / r;
            B[4 * (t0 + t) + 2] = xv[2]; B[4 * (t0 + t) + 3] = xv[3];
            continue;
        }
        const double *xv = x + 3 * (t - nfix);
        B[4 * (t0 + t)] = 1 / z; B[4 * (t0 + t) + 1] = xv[0] / r; B[4 * (t0 + t) + 2] = xv[1]; B[4 * (t0 + t) + 3] = xv[2];
    }
    if (st) {
        st->windows++; st->iterations += newton; st->solver_status = 0;
        if (2 * nt + nq > st->rows) { st->rows = 2 * nt + nq; st->cols = nv + nt; st->nonzeros = nv * (kd + 1); }
    }
done:
    cz_path_workspace_free(own);
    return rc;
}

void cz_path_defaults(cz_path_problem *p) {
    memset(p, 0, sizeof *p);
    p->crop = 1; p->w1 = 10; p->w2 = 1; p->w3 = 100; p->affine_weight = CZ_PATH_AFFINE_WEIGHT;
}

double cz_path_cost(const cz_path_problem *p, const double *B, double *hold, double *violation) {
    setup_t s; setup(p, &s);
    double ws[3] = {s.w1, p->w2, p->w3}, cost = 0;
    for (int d = 1; d <= 3; d++)
        for (int t = 0; t + d < p->n; t++) {
            int ok = 1;
            for (int j = 0; j < d; j++) if (!valid_of(p, t + j + 1)) ok = 0;
            if (!ok) continue;
            double co[3], wt;
            diff_coefs(p, &s, d, t, co, &wt);
            for (int k = 0; k < 4; k++) {
                double acc = 0;
                for (int j = 0; j < d; j++) {
                    const double *F = p->motion + 4 * (t + j + 1), *b1 = B + 4 * (t + j + 1), *b0 = B + 4 * (t + j);
                    double fb;
                    if (k == 0) fb = F[0] * b1[0] - F[1] * b1[1];
                    else if (k == 1) fb = F[1] * b1[0] + F[0] * b1[1];
                    else if (k == 2) fb = F[0] * b1[2] - F[1] * b1[3] + F[2];
                    else fb = F[1] * b1[2] + F[0] * b1[3] + F[3];
                    double R = fb - b0[k];
                    acc += co[j] * (k < 2 ? s.r : 1) * R;
                }
                cost += ws[d - 1] * s.wk[k] * wt * fabs(acc);
            }
        }
    double h = 0, viol = 0, co[8][4], bd[8];
    corner_rows(p->width, p->height, s.r, co, bd);
    for (int t = 0; t < p->n; t++) {
        const double *b = B + 4 * t;
        double q[4] = {b[0] * s.r, b[1] * s.r, b[2], b[3]}, cp[4] = {s.r / p->crop, 0, 0, 0};
        for (int k = 0; k < 4; k++) h += s.hold * s.wk[k] * dt_of(p, t) * fabs(q[k] - cp[k]);
        for (int i = 0; i < 8; i++) {
            double e = co[i][0] * q[0] + co[i][1] * q[1] + co[i][2] * q[2] + co[i][3] * q[3] - bd[i];
            if (e > viol) viol = e;
        }
    }
    if (hold) *hold = h;
    if (violation) *violation = viol;
    return cost;
}

/// cz_path_solve with the built-in solver's relative gap: 1e-9 for cz_path_solve (FREE_ZOOM_GAP with the zoom free),
/// CHOOSE_*_GAP for the crop rule.
static int solve_gap(const cz_path_problem *p, double *out, cz_path_stats *stats, double gap);

/// The free zoom's relative gap: as the crop rule's chosen path (corrections within a thousandth of a px).
#define FREE_ZOOM_GAP 1e-6

int cz_path_solve(const cz_path_problem *p, double *out, cz_path_stats *stats) {
    return solve_gap(p, out, stats, p->area_weight > 0 ? FREE_ZOOM_GAP : 1e-9);
}

static int solve_gap(const cz_path_problem *p, double *out, cz_path_stats *stats, double gap) {
    if (!p || !out || p->n < 1 || !p->motion || !(p->crop >= 1) || !(p->width > 0) || !(p->height > 0) ||
        p->w1 < 0 || p->w2 < 0 || p->w3 < 0 || p->hold < 0)
        return -1;
    cz_path_stats st; memset(&st, 0, sizeof st);
    setup_t s; setup(p, &s);
    s.gap = gap;
    int rc;
    if (p->window <= 0 || p->n <= p->window) {
        rc = p->backend == 0 ? ipm_range(p, &s, 0, p->n, 0, out, &st, NULL)
                             : solve_range(p, &s, 0, p->n, 0, out, &st, 0);
    } else {
        int L = p->window < 16 ? 16 : p->window;
        int O = p->overlap > 0 ? p->overlap : L / 3;
        if (O > L - 8) O = L - 8;
        int t0 = 0, nfix = 0;
        rc = 0;
        for (;;) {
            int t1 = t0 + L < p->n ? t0 + L : p->n;
            rc = p->backend == 0 ? ipm_range(p, &s, t0, t1, nfix, out, &st, NULL)
                                 : solve_range(p, &s, t0, t1, nfix, out, &st, 0);
            if (rc < 0 || t1 == p->n) break;
            // keep [t0, t1 - O); the next window starts 3 frames earlier with those 3 fixed (D, D2, D3 continue)
            int keep = t1 - O;
            t0 = keep - 3; nfix = 3;
        }
    }
    if (rc < 0) return rc;
    if (rc > 0) return -3;
    st.objective = cz_path_cost(p, out, &st.hold_cost, &st.violation);
    double kept = 0;
    for (int t = 0; t < p->n; t++) kept += out[4 * t] * out[4 * t] + out[4 * t + 1] * out[4 * t + 1];
    st.kept = kept / p->n;
    if (stats) *stats = st;
    return st.violation > 1e-6 ? 1 : 0;
}

int cz_path_solve_after(const cz_path_problem *p, int nfix, double *B, cz_path_workspace *w, cz_path_stats *stats) {
    if (!p || !B || p->n < 1 || !p->motion || !(p->crop >= 1) || !(p->width > 0) || !(p->height > 0) ||
        p->w1 < 0 || p->w2 < 0 || p->w3 < 0 || p->hold < 0 || nfix < 0 || nfix > p->n)
        return -1;
    cz_path_stats st; memset(&st, 0, sizeof st);
    setup_t s; setup(p, &s);
    s.gap = 1e-6;
    int rc = p->backend == 0 ? ipm_range(p, &s, 0, p->n, nfix, B, &st, w)
                             : solve_range(p, &s, 0, p->n, nfix, B, &st, 0);
    if (rc < 0) return rc;
    if (rc > 0) return -3;
    if (stats) {
        st.objective = cz_path_cost(p, B, &st.hold_cost, &st.violation);
        *stats = st;
    }
    return 0;
}

/// The crop rule's relative gaps: the chosen path to 1e-6 (its corrections within 2e-4 px of a 1e-9 solve's on the
/// shake.py clips, at a third of the Newton steps), the probes to 1e-4 (the same crops chosen).
#define CHOOSE_FINAL_GAP 1e-6
#define CHOOSE_PROBE_GAP 1e-4
int cz_path_choose(const cz_path_problem *p, double max_crop, double epsilon, double *out,
                   cz_path_stats *stats, double *crop_out) {
    if (!p || !out || p->n < 1 || !(max_crop >= 1) || !(epsilon >= 0)) return -1;
    cz_path_problem q = *p;
    q.crop = max_crop;
    cz_path_stats st;
    int rc = solve_gap(&q, out, &st, CHOOSE_PROBE_GAP);   // S(max_crop): the target's end; re-solved if chosen
    if (rc != 0) { if (crop_out) *crop_out = max_crop; if (stats) *stats = st; return rc; }
    double s_hi = st.objective;
    // the camera's own cost: the path at crop 1, where the window is the frame (B_t = identity)
    double *cam = malloc((size_t)p->n * 4 * sizeof(double));
    double *tmp = malloc((size_t)p->n * 4 * sizeof(double));
    if (!cam || !tmp) { free(cam); free(tmp); return -2; }
    for (int t = 0; t < p->n; t++) { cam[4 * t] = 1.0; cam[4 * t + 1] = cam[4 * t + 2] = cam[4 * t + 3] = 0; }
    q.crop = 1.0;
    double s_cam = cz_path_cost(&q, cam, NULL, NULL);
    free(cam);
    double target = s_hi + epsilon * (s_cam - s_hi);
    double lo = 1.0, hi = max_crop, tol = (max_crop - 1.0) / 256;
    cz_path_stats best = st;
    while (hi - lo > tol) {
        double mid = 0.5 * (lo + hi);
        q.crop = mid;
        cz_path_stats sm;
        int r = solve_gap(&q, tmp, &sm, CHOOSE_PROBE_GAP);
        if (r < 0) { free(tmp); return r; }
        if (r == 0 && sm.objective <= target) {
            hi = mid; best = sm;
            memcpy(out, tmp, (size_t)p->n * 4 * sizeof(double));
        } else lo = mid;
    }
    free(tmp);
    if (crop_out) *crop_out = hi;
    {   // the probes stop early: the chosen crop's path solved to the final precision
        q.crop = hi;
        int r = solve_gap(&q, out, &best, CHOOSE_FINAL_GAP);
        if (r < 0) return r;
    }
    if (stats) *stats = best;
    return 0;
}
