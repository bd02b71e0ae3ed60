"""Draws docs/figures/simulate_arm.png: the bundled 2-link arm under computed torque tracking a
sinusoidal reference (examples/simulate_arm.py; ``dqdyn simulate two_link_arm --duration 2``).

Run from the repository root: ``python docs/figures/make_simulate_arm.py [--out PATH] [--quick]``
(needs matplotlib; ``--quick`` simulates 1 s at dt = 2 ms instead of 2 s at 1 ms).
"""

import argparse
from pathlib import Path

from dqdyn import load_example
from dqdyn.simulation.plots import plot_simulation
from dqdyn.simulation.run import run_simulation


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).with_name("simulate_arm.png")))
    ap.add_argument("--quick", action="store_true", help="1 s at dt = 2 ms")
    args = ap.parse_args(argv)
    res = run_simulation(load_example("two_link_arm"), duration=1.0 if args.quick else 2.0,
                         dt=2e-3 if args.quick else 1e-3)
    print(f"tracking error max {res.max_error:.3g} rad, RMS {res.rms_error:.3g} rad")
    print("wrote", plot_simulation(res, args.out))


if __name__ == "__main__":
    main()
