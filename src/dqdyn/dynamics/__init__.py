"""Dynamics, one algorithm per module: Newton–Euler inverse dynamics (`newton_euler`), the
articulated-body forward dynamics (`aba`, `articulated`), the mass matrix and its inverse
(`lagrange`, `minverse`), Coriolis (`coriolis`), hybrid dynamics (`hybrid`), the dual quaternion
Euler–Lagrange form (`dqel`), Gauss's principle (`gauss`), the regressor (`regressor`), energy and
centre of mass (`energy`), the classical baselines (`classic`), mobile bases (`mobile`), forward
dynamics of constrained systems (`constrained_aba`, `forward`) and the analytic derivatives
(`derivatives`).  The public names are ``dqdyn``'s."""
