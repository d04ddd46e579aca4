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
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mpc.kernels.boxqp import NOT_PD, boxqp
from mpc.kernels.linalg import cholesky, cholesky_solve


@njit(cache=True, nogil=True)
def backward_pass(A, B, lx, lu, lxx, luu, lux, ctrl, ctrl_lo, ctrl_hi, mu, K, k, dV):
    """Fill K (T, nu, nx), k (T, nu), dV (2,); returns the knot where Q_uu + μI was not
    positive definite, or -1 on success. Knot T−1 gets the gains of knot T−2."""
    T = A.shape[0]
    nx = A.shape[1]
    nu = B.shape[2]
    Vx = lx[T - 1].copy()
    Vxx = lxx[T - 1].copy()
    dV[0] = 0.0
    dV[1] = 0.0
    K[T - 1] = 0.0
    k[T - 1] = 0.0
    bounded = False
    for i in range(nu):
        if np.isfinite(ctrl_lo[i]) or np.isfinite(ctrl_hi[i]):
            bounded = True
    Quu_reg = np.empty((nu, nu))
    L = np.zeros((nu, nu))
    free = np.ones(nu, dtype=np.bool_)
    lower = np.empty(nu)
    upper = np.empty(nu)
    kt = np.empty(nu)
    for t in range(T - 2, -1, -1):
        At = A[t]
        Bt = B[t]
        VxxA = Vxx @ At
        VxxB = Vxx @ Bt
        Qx = lx[t] + At.T @ Vx
        Qu = lu[t] + Bt.T @ Vx
        Qxx = lxx[t] + At.T @ VxxA
        Quu = luu[t] + Bt.T @ VxxB
        Qux = lux[t] + Bt.T @ VxxA
        Quu_reg[:, :] = 0.5 * (Quu + Quu.T)
        for i in range(nu):
            Quu_reg[i, i] += mu
        if bounded:
            for i in range(nu):
                lower[i] = ctrl_lo[i] - ctrl[t, i]
                upper[i] = ctrl_hi[i] - ctrl[t, i]
            status, nfree = boxqp(Quu_reg, Qu, lower, upper, k[t + 1], kt, free, L)
            if status == NOT_PD:
                return t
            K[t] = 0.0
            if nfree > 0:
                idx = np.nonzero(free)[0]
                rhs = np.empty((nfree, nx))
                for a in range(nfree):
                    rhs[a] = Qux[idx[a]]
                cholesky_solve(L[:nfree, :nfree], rhs)
                for a in range(nfree):
                    K[t, idx[a]] = -rhs[a]
        else:
            if not cholesky(Quu_reg, L):
                return t
            kt[:] = -Qu
            cholesky_solve(L, kt)
            rhs = -Qux.copy()
            cholesky_solve(L, rhs)
            K[t] = rhs
        k[t] = kt
        Kt = K[t]
        QuuK = Quu @ Kt
        Vx = Qx + Kt.T @ (Quu @ kt) + Kt.T @ Qu + Qux.T @ kt
        Vxx = Qxx + Kt.T @ QuuK + Kt.T @ Qux + Qux.T @ Kt
        Vxx = 0.5 * (Vxx + Vxx.T)
        dV[0] += kt @ Qu
        dV[1] += 0.5 * (kt @ (Quu @ kt))
    K[T - 1] = K[T - 2]
    return -1
