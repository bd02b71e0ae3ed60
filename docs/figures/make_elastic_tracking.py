"""Draws docs/figures/elastic_tracking.png: a 7-DoF elastic arm (xArm7 when example-robot-data is
installed, else a 7-link chain) tracking sinusoids under Spong's static feedback linearisation
[Mladenova, §7] (the figure of ``dqdyn reproduce elastic``, without its symbolic part).

Run from the repository root: ``python docs/figures/make_elastic_tracking.py [--out PATH] [--quick]``
(needs matplotlib and scipy; ``--quick`` tracks 0.5 s instead of 1 s).
"""

import argparse
from pathlib import Path

from dqdyn.reproduce.elastic import arm7, elastic_arm7, plot_tracking, tracking


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).with_name("elastic_tracking.png")))
    ap.add_argument("--quick", action="store_true", help="0.5 s of tracking")
    args = ap.parse_args(argv)
    model, label = arm7()
    t, q, qref, rms, _ = tracking(elastic_arm7(model), duration=0.5 if args.quick else 1.0,
                                  n_out=201 if args.quick else 401)
    print(f"{label}: tracking RMS error {rms:.2e} rad over {t[-1]:.1f} s")
    print("wrote", plot_tracking(t, q, qref, args.out, label))


if __name__ == "__main__":
    main()
