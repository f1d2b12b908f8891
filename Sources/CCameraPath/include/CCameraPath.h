/*
 * CCameraPath: the L1-optimal camera path of `cropzoom --stabilize` (issue 29), and its solver.
 *
 * Grundmann, Kwatra & Essa, "Auto-directed video stabilization with robust L1 optimal camera paths"
 * (CVPR 2011), for the similarity model of the stabilisation contract: given the inter-frame motions F_t
 * (frame t -> frame t-1, centred coded-luma px, pixel centres at +0.5), choose per frame the update
 * transform B_t (output centred coords -> frame t's, the crop zoom folded in: no stabilisation is
 * B_t = (1/z, 0, 0, 0)) minimising
 *     w1 |D(P)|1 + w2 |D2(P)|1 + w3 |D3(P)|1  (+ hold |B_t - (1/z,0,0,0)|1 per second)
 * over the residuals R_t = F_{t+1} B_{t+1} - B_t (P_t = M_t B_t with M_t left out, as in the paper),
 * subject to inclusion (the output's four corners, moved by B_t, inside the frame: eight rows per frame)
 * and proximity (a = 1/z: the crop zoom is fixed; |b| <= 0.05/z, a rotation of at most 2.9 degrees).
 *
 * Solvers: built in (backend 0, the default), a log-barrier interior-point method on the path variables
 * whose Newton matrix is banded (half-bandwidth 11), so its time grows linearly with the frame count; it
 * needs only libm. For comparison the same LP can go to COIN-OR Clp (compile with -DCZ_PATH_CLP, link
 * -lClp -lCoinUtils) or GLPK (-DCZ_PATH_GLPK, -lglpk) as backend 1. Their objectives agree within 2e-10
 * relative (Benchmarks/results/l1-solver.md).
 *
 * Units: the residuals' translations are px; a and b are carried as r*a, r*b (r the frame's half
 * diagonal: the corner displacement they cause) and weighted `affine_weight` times the translations.
 * Derivatives are per time when durations are given (VFR), expressed per mean frame interval; each term
 * is weighted by the time it covers.
 *
 * Smoothing (`--stabilize-smoothing SECONDS`, "how long a correction may take"): hold = w1 / SECONDS.
 * Following the camera over d px costs w1*d; holding a correction of d px for T seconds costs hold*T*d,
 * so a correction is held at most about SECONDS before the path prefers to follow the camera back.
 * hold = 0 (no option given): no pull back, the path stays wherever the crop allows.
 * Tripod (mode 1, `--stabilize tripod`): hold is ignored and w1 multiplied by 10: the view is held still
 * as long as the inclusion constraint allows, and moves (smoothly, w2 and w3 unchanged) only when forced to.
 *
 * Infeasibility: with a = 1/z fixed, B_t = (1/z, 0, 0, 0) (following the camera) always satisfies inclusion,
 * so the LP is feasible for every z >= 1: shake larger than the margin only makes the path follow more of it.
 * The LP backends still carry a soft-inclusion fallback (penalty CZ_PATH_PENALTY per px and frame) for
 * the case a solver reports infeasibility from rounding; cz_path_solve then returns 1 with the path and
 * stats->violation.
 *
 * Crop: one zoom for the clip picked by cz_path_choose (see its comment), or (area_weight > 0) a zoom per frame
 * between 1 and crop, rewarded for the area it keeps and bounded in speed (zoom_rate): what cropzoom uses for a file.
 * The renderer shows B_t's window scaled to W x H.
 */
#ifndef CCAMERAPATH_H
#define CCAMERAPATH_H

#ifdef __cplusplus
extern "C" {
#endif

/// Default weight of a, b (as the corner displacement r*a, r*b they cause, r the half diagonal) relative to
/// the translations. The paper's 100 is per unit of a against per px (= 100/r here, 0.27 at 640x360); on the
/// shake.py clips 0.27 left twice the rotation jitter of 0.8, 1.0 a third more translation jitter
/// (Benchmarks/results/l1-solver.md).
#define CZ_PATH_AFFINE_WEIGHT 0.8

/// With zoom_rate: how much faster the zoom may grow (making room for shake that has grown, which a live path sees
/// only its look-ahead ahead) than fall.
#define CZ_PATH_ZOOM_IN_FACTOR 3.0

/// Cost per px (per frame) of the crop window leaving the frame: the soft inclusion's penalty.
#define CZ_PATH_PENALTY 1e5

/// One path problem. All arrays are borrowed, not copied.
typedef struct {
    int n;                        ///< frames
    const double *motion;         ///< n x 4: row t = F_t (a, b, tx, ty), t >= 1; row 0 ignored
    const unsigned char *valid;   ///< n entries or NULL: 0 = motion t unknown: no smoothness cost across it
                                  ///< (the path is free to jump there)
    const double *duration;       ///< n entries or NULL: frame t's duration in s (time to frame t+1)
    double width, height;         ///< frame size in the motion's units (px)
    double crop;                  ///< the crop zoom z >= 1 (window W/z x H/z), fixed
    double w1, w2, w3;            ///< 10, 1, 100 by default
    double affine_weight;         ///< weight of a, b (as corner px) relative to translation; <= 0: default
    double hold;                  ///< >= 0: cost per px and second of |B_t - crop| (0 = none)
    int mode;                     ///< 0 smooth, 1 tripod
    int window;                   ///< 0: one solve; else windows of this many frames (seams cost: see l1-solver.md)
    int overlap;                  ///< frames a window shares with the next (discarded, re-solved); 0: window/3
    int backend;                  ///< 0: the built-in barrier method; 1: the LP library built in (-DCZ_PATH_CLP/GLPK)
    double smooth2;               ///< >= 0, built-in solver only: weight of the *squared* second differences
                                  ///< (per px^2), added to the L1 objective; 0 = the pure L1 programme
    double area_weight;           ///< > 0, built-in solver only: the zoom is free per frame between 1 and crop
                                  ///< (its changes cost as a's in the smoothness terms), and each px of the
                                  ///< window's half diagonal kept (r a) is rewarded this much per mean frame
                                  ///< interval; 0 = one fixed zoom, crop. Solved to a relative gap of 1e-6.
    double zoom_weight;           ///< with area_weight: the zoom's difference terms weigh this many times a rotation's
                                  ///< (<= 0: 1)
    double zoom_rate;             ///< with area_weight, > 0: the zoom falls by at most this share per second
                                  ///< (a_t - a_{t-1} <= zoom_rate dt / crop; without durations a frame is 1/30 s) and
                                  ///< grows at most CZ_PATH_ZOOM_IN_FACTOR times as fast
} cz_path_problem;

/// What a solve did.
typedef struct {
    double objective;             ///< smoothness cost w1|D|+w2|D2|+w3|D3| of the returned path
    double hold_cost;             ///< hold term of the returned path
    double violation;             ///< largest distance (px) a window corner leaves its frame; 0 = feasible
    double kept;                  ///< mean over frames of the window's area share, (a^2 + b^2)
    double lp_objective;          ///< backend 1: the LP solver's objective, summed over windows; 0 otherwise
    int rows, cols, nonzeros;     ///< size of the (largest) LP; built-in: inequalities, unknowns, band entries
    int windows;                  ///< solves (windows)
    int solver_status;            ///< backend 1: the LP library's status of the last LP (0 = optimal)
    int iterations;               ///< the built-in solver's Newton steps, all windows
} cz_path_stats;

/// Fills `p` with the defaults: w 10/1/100, affine_weight CZ_PATH_AFFINE_WEIGHT, hold 0, mode 0, crop 1, one solve, backend 0.
void cz_path_defaults(cz_path_problem *p);

/// Solves the L1 path for the fixed crop p->crop. out: n x 4 (a, b, tx, ty) of B_t. stats may be NULL.
/// Returns 0 when the path keeps every window inside its frame, 1 when it could not (the returned path is
/// the least-violating one: see stats->violation), < 0 on error (-1 bad arguments, -2 no memory,
/// -3 the solver failed, or backend 1 was asked of a build without an LP library).
int cz_path_solve(const cz_path_problem *p, double *out, cz_path_stats *stats);

/// Evaluates a path (n x 4 B_t) under p's objective: returns the smoothness cost; hold and violation
/// (may be NULL) receive the hold cost and the largest corner excursion in px.
double cz_path_cost(const cz_path_problem *p, const double *B, double *hold, double *violation);

/// The crop rule's default epsilon: the crop buys 99.5 % of the smoothness gain max_crop would.
#define CZ_PATH_CHOOSE_EPSILON 0.005

/// Chooses the crop and solves: the smallest zoom z in [1, max_crop] (to 1/256 of the range) whose path
/// keeps the windows inside the frames and whose smoothness cost S(z) has reached all but `epsilon` of the
/// gain the crop can buy: S(z) <= S(max_crop) + epsilon * (S_camera - S(max_crop)), S_camera the cost of
/// the camera's own path (z = 1, B_t = identity). S(z) falls steeply while the margin is smaller than the
/// shake and flattens once the path has room (on the shake.py clips S(1.02) is still 7-34 times S(1.1), and
/// from z ~ 1.05 S changes by a few % per 0.01); the rule stops at that knee, so the crop is what this
/// clip's shake needs, not a fixed share. epsilon 0.005 chose kept areas 0.906-0.932 on those clips.
/// Bisection (S is non-increasing in z: a larger z only widens the feasible set): 9 solves for max_crop 1.1.
/// Suggested: max_crop 1.1, epsilon CZ_PATH_CHOOSE_EPSILON. If a solve reports a violation at max_crop,
/// that path is returned with 1. *crop_out receives z; out, stats as cz_path_solve; p->crop is ignored.
int cz_path_choose(const cz_path_problem *p, double max_crop, double epsilon, double *out,
                   cz_path_stats *stats, double *crop_out);

/// The built-in solver's arrays for windows of up to a number of frames: made once, reused by every solve of a live
/// path (nothing allocated per frame).
typedef struct cz_path_workspace cz_path_workspace;

/// Arrays for windows of up to `frames` frames; NULL when out of memory or frames < 1.
cz_path_workspace *cz_path_workspace_new(int frames);
void cz_path_workspace_free(cz_path_workspace *w);

/// One step of a live (receding-horizon) path: the window of frames [0, p->n), whose first `nfix` rows of B are
/// already shown and stay as they are (three carry the path's first to third differences on), is solved at the
/// fixed crop p->crop; the other rows of B are written. The window's last frames are the look-ahead: their rows
/// are the plan, re-solved when the next frame arrives. Stops at a relative gap of 1e-6 (a frame's correction to
/// well under a thousandth of a px). `w`: a workspace for at least p->n frames (NULL: made and freed here; a
/// smaller one gives -1). Returns 0, or < 0 as cz_path_solve; stats (may be NULL) as cz_path_solve's.
int cz_path_solve_after(const cz_path_problem *p, int nfix, double *B, cz_path_workspace *w, cz_path_stats *stats);

/// One axis of a reframing window's path (`--follow`, framepath.c): x_t, the window's left (or top) edge in px, per
/// frame. Minimises w1|D x| + w2|D2 x| + w3|D3 x| (per frame, no term across a cut) + weight_t w_target per px that
/// x_t lies beyond `dead_zone` of target_t + w_inside per px the subject leaves the window (x_t above inside_hi_t or
/// below inside_lo_t), with lo <= x_t <= hi and, when > 0, |x_{t+1} - x_t| <= max_speed dt_t and
/// |D2 x| <= max_accel dt^2 (not across a cut). All arrays borrowed, n entries; NaN: nothing that frame.
typedef struct {
    int n;
    double lo, hi;                ///< the window inside the picture: lo <= x_t <= hi
    const double *target;         ///< the x that centres the subject (NaN: no subject)
    const double *weight;         ///< NULL or the target's weight per frame (0: none)
    const double *inside_lo;      ///< the subject inside the window needs x_t >= inside_lo_t (NaN: none)
    const double *inside_hi;      ///< ... and x_t <= inside_hi_t
    const unsigned char *cut;     ///< NULL or 1 where a cut comes before frame t: the window may jump there
    const double *duration;       ///< NULL (1/30 s each) or frame t's duration in s (for the bounds)
    double dead_zone;             ///< px around the target that cost nothing
    double w1, w2, w3;            ///< 10, 1, 100 by default (as the camera path)
    double w_target, w_inside;    ///< 1 and 50 by default, per px and frame
    double max_speed;             ///< px per s, 0: none
    double max_accel;             ///< px per s^2, 0: none
    int nfix;                     ///< frames [0, nfix) are already shown (a live path): x_t = fixed[t], not unknowns;
                                  ///< the bounds that tie them to the unknown frames are kept as steep penalties
    const double *fixed;          ///< nfix entries (NULL when nfix = 0)
} cz_frame_problem;

/// Fills `p` with the defaults (weights; no arrays, no bounds).
void cz_frame_defaults(cz_frame_problem *p);

/// The solver's memory for problems of up to n frames (a live path solves one per frame: nothing is allocated then).
typedef struct cz_frame_work cz_frame_work;

/// A workspace for problems of up to n frames; NULL when n < 1 or out of memory. Free with cz_frame_work_free.
cz_frame_work *cz_frame_work_new(int n);
void cz_frame_work_free(cz_frame_work *w);

/// Solves for x (n entries; with nfix, x[0..nfix) are set to fixed) in `work`'s memory, allocating nothing. Returns
/// 0, or < 0 as cz_path_solve (-1 bad arguments, or p->n beyond the workspace's size; -3 the solver failed). stats
/// (may be NULL): objective (cz_frame_cost of x), iterations, rows, cols.
int cz_frame_solve(const cz_frame_problem *p, double *x, cz_path_stats *stats, cz_frame_work *work);

/// The objective of a path x under p.
double cz_frame_cost(const cz_frame_problem *p, const double *x);

#ifdef __cplusplus
}
#endif
#endif
