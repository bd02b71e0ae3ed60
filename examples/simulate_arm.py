"""Simulate the bundled 2-link arm under computed torque (dqdyn simulate's default controller)
tracking a sinusoidal reference, and plot positions (with references) and torques with units.

The same as ``dqdyn simulate two_link_arm --duration 2 --plot simulate_arm.png``.
"""

from dqdyn import load_example
from dqdyn._optional import available
from dqdyn.simulation.run import run_simulation

res = run_simulation(load_example("two_link_arm"), duration=2.0)
print(f"{len(res.trajectory)} samples; tracking error max {res.max_error:.3g} rad, "
      f"RMS {res.rms_error:.3g} rad")
if available("matplotlib"):
    from dqdyn.simulation.plots import plot_simulation

    print("wrote", plot_simulation(res, "simulate_arm.png"))
