"""The iLQR backward pass with control limits (box-QP) and control regularization μ.

From the terminal value V = ℓ_T, for t = T−2 … 0:

    Q_x  = ℓ_x  + Aᵀ V_x           Q_u  = ℓ_u  + Bᵀ V_x
    Q_xx = ℓ_xx + Aᵀ V_xx A        Q_uu = ℓ_uu + Bᵀ V_xx B        Q_ux = ℓ_ux + Bᵀ V_xx A

k = argmin ½ kᵀ(Q_uu + μI)k + Q_uᵀk on the box ctrl_lo − u_t ≤ k ≤ ctrl_hi − u_t;
K = −(Q_uu + μI)⁻¹_ff Q_ux,f on the free rows, 0 on clamped rows. The value update uses the
unregularized Q:

    V_x  = Q_x  + Kᵀ Q_uu k + Kᵀ Q_u + Q_uxᵀ k
    V_xx = Q_xx + Kᵀ Q_uu K + Kᵀ Q_ux + Q_uxᵀ K      (symmetrized)

and the expected cost change of step α is α dV[0] + α² dV[1] with dV = (Σ kᵀQ_u, Σ ½ kᵀQ_uu k).

The kernel evaluates the value update in the equivalent factored form

    V_x  = Q_x + Kᵀ (Q_uu k + Q_u) + Q_uxᵀ k
    V_xx = sym(Q_xx) + P + Pᵀ      with  P = Kᵀ (½ Q_uu K + Q_ux)

(P + Pᵀ is the symmetrized sum of the three K terms), which takes one nx×nu×nx product instead
of three.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mpc.planner.kernels.boxqp import NOT_PD, boxqp
from mpc.planner.kernels.linalg import cholesky, cholesky_solve


@njit(cache=True, nogil=True)
def backward_pass(A, B, lx, lu, lxx, luu, lux, ctrl, ctrl_lo, ctrl_hi, mu, K, k, dV):
    """Fill K (T, nu, nx), k (T, nu), dV (2,); returns the knot where Q_uu + μI was not
    positive definite, or -1 on success. Knot T−1 gets the gains of knot T−2."""
    T = A.shape[0]
    nx = A.shape[1]
    nu = B.shape[2]
    dV[0] = 0.0
    dV[1] = 0.0
    K[T - 1] = 0.0
    k[T - 1] = 0.0
    bounded = False
    for i in range(nu):
        if np.isfinite(ctrl_lo[i]) or np.isfinite(ctrl_hi[i]):
            bounded = True
    # Every temporary is allocated once: the products below write into them with
    # np.dot(a, b, out) instead of allocating a result per knot. The gains are worked out in
    # contiguous buffers Kt, kt (what BLAS and cholesky_solve need, whatever the layout of K, k)
    # and copied out.
    Vx = lx[T - 1].copy()
    Vxx = lxx[T - 1].copy()
    VxxA = np.empty((nx, nx))
    VxxB = np.empty((nx, nu))
    Qx = np.empty(nx)
    Qu = np.empty(nu)
    Qxx = np.empty((nx, nx))
    Quu = np.empty((nu, nu))
    Qux = np.empty((nu, nx))
    P = np.empty((nx, nx))
    M = np.empty((nu, nx))
    Quu_k = np.empty(nu)
    vx = np.empty(nx)
    Quu_reg = np.empty((nu, nu))
    L = np.zeros((nu, nu))
    free = np.ones(nu, dtype=np.bool_)
    lower = np.empty(nu)
    upper = np.empty(nu)
    kt = np.empty(nu)
    Kt = np.empty((nu, nx))
    rhs = np.empty((nu, nx))
    for t in range(T - 2, -1, -1):
        At = A[t]
        Bt = B[t]
        np.dot(Vxx, At, VxxA)
        np.dot(Vxx, Bt, VxxB)
        np.dot(At.T, Vx, Qx)
        Qx += lx[t]
        np.dot(Bt.T, Vx, Qu)
        Qu += lu[t]
        np.dot(At.T, VxxA, Qxx)
        Qxx += lxx[t]
        np.dot(Bt.T, VxxB, Quu)
        Quu += luu[t]
        np.dot(Bt.T, VxxA, Qux)
        Qux += lux[t]
        for i in range(nu):
            for j in range(nu):
                Quu_reg[i, j] = 0.5 * (Quu[i, j] + Quu[j, i])
            Quu_reg[i, i] += mu
        if bounded:
            for i in range(nu):
                lower[i] = ctrl_lo[i] - ctrl[t, i]
                upper[i] = ctrl_hi[i] - ctrl[t, i]
            status, nfree = boxqp(Quu_reg, Qu, lower, upper, k[t + 1], kt, free, L)
            if status == NOT_PD:
                return t
            Kt[:, :] = 0.0
            if nfree > 0:
                a = 0
                for i in range(nu):
                    if free[i]:
                        for c in range(nx):
                            rhs[a, c] = Qux[i, c]
                        a += 1
                Kf = rhs[:nfree]
                cholesky_solve(L[:nfree, :nfree], Kf)
                a = 0
                for i in range(nu):
                    if free[i]:
                        for c in range(nx):
                            Kt[i, c] = -Kf[a, c]
                        a += 1
        else:
            if not cholesky(Quu_reg, L):
                return t
            for i in range(nu):
                kt[i] = -Qu[i]
            cholesky_solve(L, kt)
            for i in range(nu):
                for c in range(nx):
                    Kt[i, c] = -Qux[i, c]
            cholesky_solve(L, Kt)
        K[t] = Kt
        k[t] = kt
        # V_x = Q_x + Kᵀ(Q_uu k + Q_u) + Q_uxᵀ k
        np.dot(Quu, kt, Quu_k)
        dV[0] += kt @ Qu
        dV[1] += 0.5 * (kt @ Quu_k)
        Quu_k += Qu
        np.dot(Kt.T, Quu_k, Vx)
        np.dot(Qux.T, kt, vx)
        Vx += Qx
        Vx += vx
        # V_xx = sym(Q_xx) + P + Pᵀ with P = Kᵀ(½ Q_uu K + Q_ux)
        np.dot(Quu, Kt, M)
        for i in range(nu):
            for c in range(nx):
                M[i, c] = 0.5 * M[i, c] + Qux[i, c]
        np.dot(Kt.T, M, P)
        for i in range(nx):
            for j in range(i, nx):
                v = 0.5 * (Qxx[i, j] + Qxx[j, i]) + (P[i, j] + P[j, i])
                Vxx[i, j] = v
                Vxx[j, i] = v
    K[T - 1] = K[T - 2]
    return -1
