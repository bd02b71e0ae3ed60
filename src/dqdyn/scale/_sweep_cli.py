"""The ``dqdyn sweep`` command: its arguments, checked before any cluster starts, and the run
(`dqdyn.scale.sweep.run_sweep`)."""

from __future__ import annotations

import os

from dqdyn.errors import ShapeError
from dqdyn.scale import _stores
from dqdyn.scale.sweep import COMPRESSORS, QUANTITIES, Perturbation, make_spec, run_sweep


def add_sweep_parser(sub) -> None:
    """The ``dqdyn sweep`` sub-command (registered by `dqdyn.cli`)."""
    from dqdyn._cliargs import HelpFormatter, add_model_arguments

    p = sub.add_parser(
        "sweep", help="generate a dataset (q, v, a, tau, M, ...) into Zarr on a Dask cluster",
        description="Generate a dataset of states and dynamics quantities into a Zarr store, "
                    "chunk by chunk on a local process cluster (default) or a remote Dask "
                    "scheduler; an interrupted sweep resumes where it stopped.",
        epilog="examples:\n"
               "  dqdyn sweep panda --out panda.zarr --states 100000 --quantities tau,M\n"
               "  dqdyn sweep robot.urdf --out ds.zarr --grid 5 --workers 0\n"
               "  dqdyn sweep ur5 --out fam.zarr --states 10000 --models 8 --mass 0.1",
        formatter_class=HelpFormatter)
    add_model_arguments(p)
    p.add_argument("--out", required=True, help="Zarr store (a directory) to create or resume")
    p.add_argument("--states", type=int, default=None, help="number of states (random sampling)")
    p.add_argument("--grid", type=int, default=0,
                   help="a grid of GRID points per q entry within the joint limits instead")
    p.add_argument("--chunk", type=int, default=65536, help="states per chunk (task)")
    p.add_argument("--compressor", choices=COMPRESSORS, default="zstd",
                   help="of the data arrays (default: Zarr's zstd; lz4: faster; none: fastest)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--inputs", choices=("a", "tau"), default="a",
                   help="sample accelerations (inverse dynamics) or torques (forward dynamics)")
    p.add_argument("--quantities", default="tau",
                   help=f"comma-separated, from {','.join(sorted(QUANTITIES))} (q, v and the "
                        "sampled a or tau are always stored)")
    p.add_argument("--models", type=int, default=1, help="number of perturbed models")
    for k, h in (("mass", "σ of log mass factors"), ("com", "σ of CoM offsets (m)"),
                 ("inertia", "σ of log principal second moments"),
                 ("axes", "σ of principal-axis rotations (rad)"), ("payload", "largest payload (kg)")):
        p.add_argument(f"--{k}", type=float, default=0.0, help=h)
    p.add_argument("--payload-body", default=None, help="body carrying the payload (default: last)")
    p.add_argument("--workers", type=int, default=None,
                   help="local worker processes (default: one per core, at most 4; 0: run in "
                        "this process)")
    p.add_argument("--threads", type=int, default=None,
                   help="numba threads per worker (default: cores // workers on the host)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="a running Dask scheduler (tcp://host:8786) instead of a local cluster")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to reach --scheduler")
    p.add_argument("--no-workers-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="stop when the cluster has had no workers for this long (default: 60)")
    p.add_argument("--max-chunks", type=int, default=None, help="stop after this many chunks")
    p.add_argument("--overwrite", action="store_true", help="replace an existing store")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sweep, sweep_parser=p)


def command_line(args) -> str:
    """The ``dqdyn sweep`` command of ``args`` (its options that differ from the defaults)."""
    import shlex

    parser = getattr(args, "sweep_parser", None)
    if parser is None:
        return "dqdyn sweep … (the same arguments)"
    words = ["dqdyn", "sweep"]
    for act in parser._actions:
        if act.dest in ("help", "func", "sweep_parser"):
            continue
        val = getattr(args, act.dest, None)
        if not act.option_strings:
            words += [] if val is None else [str(val)]
        elif val != act.default and val is not None:
            words += [act.option_strings[-1]] + ([] if val is True else [str(val)])
    return shlex.join(words)


def check_output(out: str) -> None:
    """``--out`` must be a place where a store can be written: checked before any cluster starts
    (a directory that cannot be made or written is named here, not by a worker that fails)."""
    from dqdyn.errors import StoreError

    root = _stores.local_path(out)
    if root is None:
        return  # (a remote store: its workers reach it, this process may not)
    d = os.path.abspath(root)
    probe = None
    try:
        os.makedirs(d, exist_ok=True)
        probe = os.path.join(d, f".dqdyn-write-check-{os.getpid()}")
        with open(probe, "wb"):
            pass
    except OSError as e:
        raise StoreError(f"--out: the store {out!r} cannot be written ({type(e).__name__}: "
                         f"{e.strerror or e}{f': {e.filename!r}' if e.filename else ''}); choose "
                         "a directory you can write") from None
    finally:
        if probe is not None and os.path.exists(probe):
            os.remove(probe)


def cmd_sweep(args) -> int:
    """``dqdyn sweep``: see `add_sweep_parser`."""
    import warnings

    from dqdyn._cliargs import load_model, model_source

    src = model_source(args)
    if args.states is None and not args.grid:
        raise ShapeError("sweep: give --states N or --grid G")
    check_output(args.out)  # before the robot is loaded and any cluster starts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_model(args)
    pert = Perturbation(mass=args.mass, com=args.com, inertia=args.inertia, axes=args.axes,
                        payload=args.payload, payload_body=args.payload_body)
    if args.payload_body is not None:
        model.body_index(args.payload_body)
    spec = make_spec(model, states=args.states, chunk=args.chunk, seed=args.seed,
                     sampling="grid" if args.grid else "random", grid=args.grid,
                     inputs=args.inputs, quantities=args.quantities, models=args.models,
                     perturbation=pert, source=str(src), compressor=args.compressor)
    client = None
    try:
        from dqdyn.scale import distributed as dd

        if args.scheduler:
            client = dd.connect(args.scheduler, timeout=args.timeout, threads=args.threads)
        elif args.workers != 0:
            client = dd.local_cluster(args.workers, threads=args.threads)
        r = run_sweep(args.out, model, spec, client=client, max_chunks=args.max_chunks,
                      overwrite=args.overwrite, progress=not args.no_progress,
                      no_workers_timeout=args.no_workers_timeout,
                      resume="rerun " + command_line(args).replace(" --overwrite", ""))
    finally:
        if client is not None:
            cluster = client.cluster if not args.scheduler else None
            client.close()
            if cluster is not None:
                cluster.close()
    print(f"{args.out}: {r['done']}/{r['total']} chunks done ({r['ran']} this run, "
          f"{r['seconds']:.1f} s{', ~%.3g states/s' % (r['ran'] * spec.chunk / r['seconds']) if r['ran'] and r['seconds'] > 0 else ''})")
    return 0 if r["done"] == r["total"] else 3


