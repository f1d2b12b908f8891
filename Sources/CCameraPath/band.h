/*
 * The banded Cholesky factorisation both barrier solvers of CCameraPath use (campath.c: the camera path; framepath.c:
 * the reframing window's path). Internal to the target: not in include/.
 */
#ifndef CZ_BAND_H
#define CZ_BAND_H

/// Banded Cholesky in place (lower band of half-bandwidth kd, A[i*(kd+1)+d] = A(i, i-d)); returns 0, or -1 if not
/// positive.
int cz_band_chol(double *A, int n, int kd);

/// Solves L L' x = b in place (x holds b) with the factor cz_band_chol left in A.
void cz_band_solve(const double *A, int n, double *x, int kd);

#endif
