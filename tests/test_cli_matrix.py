"""Every sub-command that names a robot resolves it the same way (`dqdyn.load`), with the same
options, defaults and error texts; usage errors exit with 2; arguments are checked before any
work starts.  In-process through `dqdyn.cli.main` (the work itself is replaced by a stop that
records the model), a few through a subprocess."""

import os
import subprocess
import sys

import pytest

import dqdyn
from dqdyn.cli import build_parser, main
from dqdyn.models import example_robot_data_dir
from dqdyn.parsers import bundled

ERD = example_robot_data_dir() is not None
COMMANDS = ("info", "simulate", "view", "sweep")

MJCF = """<mujoco model="pendulum2">
  <worldbody>
    <body name="l1" pos="0 0 1">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>
      <body name="l2" pos="0 0 -0.5">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


class Stop(Exception):
    """Raised by the stand-in for each command's work, with the model it was given."""

    def __init__(self, model):
        super().__init__("stopped")
        self.model = model


@pytest.fixture
def stops(monkeypatch):
    """Replace the work of every command by a Stop that carries the resolved model."""
    import dqdyn.cli as cli
    import dqdyn.scale._sweep_cli as sweep
    import dqdyn.simulation.run as run
    import dqdyn.viz.viewer as viewer

    def raise_stop(model, *a, **k):
        raise Stop(model)

    monkeypatch.setattr(cli, "_info_tables", raise_stop)
    monkeypatch.setattr(run, "run_simulation", raise_stop)
    monkeypatch.setattr(viewer, "Viewer", raise_stop)
    monkeypatch.setattr(sweep, "make_spec", raise_stop)


def argv(cmd, model, tmp_path, *extra):
    tail = {"sweep": ["--out", str(tmp_path / "s.zarr"), "--states", "10", "--workers", "0"]}
    return [cmd, model, *tail.get(cmd, []), *extra]


def resolved(cmd, model, tmp_path, *extra):
    with pytest.raises(Stop) as ei:
        main(argv(cmd, model, tmp_path, *extra))
    m = ei.value.model
    return (m.name, m.nq, m.nv, round(float(m.total_mass), 9), tuple(m.joint_names))


def sources(tmp_path):
    mj = tmp_path / "pendulum2.xml"
    mj.write_text(MJCF)
    out = {"bundled name": "two_link_arm", "URDF path": str(bundled("two_link_arm")),
           "MJCF path": str(mj)}
    if ERD:
        out["example-robot-data name"] = "ur5"
    return out


@pytest.mark.parametrize("form", ["bundled name", "example-robot-data name", "URDF path",
                                  "MJCF path"])
def test_every_command_resolves_a_model_the_same_way(form, stops, tmp_path):
    src = sources(tmp_path)
    if form not in src:
        pytest.skip("example-robot-data is not installed")
    got = {cmd: resolved(cmd, src[form], tmp_path) for cmd in COMMANDS}
    assert len(set(got.values())) == 1, got
    want = dqdyn.load(src[form])
    assert got["info"][1:3] == (want.nq, want.nv)
    # --bundled NAME is the same as MODEL
    if form == "bundled name":
        for cmd in COMMANDS:
            a = argv(cmd, src[form], tmp_path)
            a[1:2] = ["--bundled", src[form]]
            with pytest.raises(Stop) as ei:
                main(a)
            assert ei.value.model.nq == want.nq


def test_options_and_defaults_are_the_same_everywhere(stops, tmp_path):
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    opts = ("root", "fixed_base", "mimic", "ignore", "package_dirs", "menagerie", "bundled")
    defaults = {}
    for cmd in COMMANDS:
        p = sub.choices[cmd]
        acts = {a.dest: a for a in p._actions}
        defaults[cmd] = tuple((k, acts[k].default, tuple(acts[k].choices or ())) for k in opts)
    assert len(set(defaults.values())) == 1, defaults
    # the same option changes the model the same way in every command
    free = {cmd: resolved(cmd, "two_link_arm", tmp_path, "--root-joint", "free")
            for cmd in COMMANDS}
    assert len(set(free.values())) == 1 and free["info"][1:3] == (10, 8)
    fixed = {cmd: resolved(cmd, "solo12" if ERD else "two_link_arm", tmp_path, "--fixed-base")
             for cmd in COMMANDS}
    assert len(set(fixed.values())) == 1


def _err(capsys, cmd, args):
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2, (cmd, err)
    assert err.startswith("dqdyn: error:") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("kind", ["typo", "missing file", "option that does not apply"])
def test_the_same_error_text_in_every_command(kind, stops, capsys, tmp_path):
    src = sources(tmp_path)
    model, extra = {"typo": ("two_lnik_arm", ()),
                    "missing file": (str(tmp_path / "nowhere" / "robot.urdf"), ()),
                    "option that does not apply": (src["MJCF path"], ("--mimic", "independent")),
                    }[kind]
    errs = {cmd: _err(capsys, cmd, argv(cmd, model, tmp_path, *extra)) for cmd in COMMANDS}
    assert len(set(errs.values())) == 1, errs
    text = next(iter(errs.values()))
    if kind == "typo":
        assert "Did you mean 'two_link_arm'" in text
        assert "jaco6" not in text  # a suggestion, not the list of every name
    elif kind == "missing file":
        assert f"MODEL: no such file {str(tmp_path / 'nowhere' / 'robot.urdf')!r}" in text
    else:
        assert "'mimic'" in text and "do not apply" in text


@pytest.mark.parametrize("cmd", COMMANDS)
def test_usage_errors_exit_2(cmd, capsys, tmp_path):
    with pytest.raises(SystemExit) as ei:
        main(argv(cmd, "two_link_arm", tmp_path, "--root-joint", "spherical"))
    assert ei.value.code == 2
    with pytest.raises(SystemExit) as ei:
        main(argv(cmd, "two_link_arm", tmp_path, "--no-such-option"))
    assert ei.value.code == 2
    capsys.readouterr()
    a = argv(cmd, "two_link_arm", tmp_path)
    del a[1]  # no MODEL
    assert "give MODEL" in _err(capsys, cmd, a)
    assert "not both" in _err(capsys, cmd, argv(cmd, "two_link_arm", tmp_path, "--bundled", "x"))
    assert "contradicts" in _err(capsys, cmd, argv(cmd, "two_link_arm", tmp_path, "--fixed-base",
                                                   "--root-joint", "free"))


@pytest.fixture
def nothing_runs(monkeypatch):
    """Loading or computing anything fails the test: the checks must come first."""
    import dqdyn.loading as loading
    import dqdyn.reproduce as reproduce
    import dqdyn.simulation.run as run

    def boom(*a, **k):
        raise AssertionError("work started before the arguments were checked")

    monkeypatch.setattr(loading, "load", boom)
    monkeypatch.setattr(run, "run_simulation", boom)
    monkeypatch.setattr(reproduce, "reproduce", boom)


def test_arguments_are_checked_before_any_work(nothing_runs, capsys, tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    cases = [
        (["simulate", "two_link_arm", "--plot", str(tmp_path / "nodir" / "p.png")], "--plot"),
        (["simulate", "two_link_arm", "--plot", str(tmp_path / "p.txt")], ".png"),
        (["simulate", "two_link_arm", "--plot", str(tmp_path)], "folder"),
        (["simulate", "two_link_arm", "--save", str(tmp_path / "nodir" / "t.npz")], "--save"),
        (["simulate", "two_link_arm", "--dt", "-1"], "--dt"),
        (["simulate", "two_link_arm", "--duration", "0.001", "--dt", "0.01"], "--dt"),
        (["view", "two_link_arm", "--traj", str(tmp_path / "none.npz")], "--traj: no such file"),
        (["view", "two_link_arm", "--port", "0"], "--port"),
        (["sweep", "two_link_arm", "--out", str(tmp_path / "s.zarr")], "--states"),
        (["sweep", "two_link_arm", "--out", str(a_file / "s.zarr"), "--states", "5"], "--out"),
        (["reproduce", "jaco", "--out", str(a_file)], "--out"),
        (["demo", "nope"], "unknown case"),
    ]
    for args, needle in cases:
        assert needle in _err(capsys, args[0], args), args
    # the same text for a missing file whatever the argument
    e1 = _err(capsys, "view", ["view", "two_link_arm", "--traj", str(tmp_path / "x.npz")])
    assert e1.endswith(f"--traj: no such file {str(tmp_path / 'x.npz')!r}\n")


def test_each_help_is_its_own_with_an_example(capsys):
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    texts = {}
    for name, p in sub.choices.items():
        h = p.format_help()
        assert "example" in h and f"dqdyn {name}" in h.split("example", 1)[1], name
        texts[name] = p.description
    assert len(set(texts.values())) == len(texts)  # demo's text is not reproduce's


def test_bench_without_a_checkout_says_where_the_scripts_are(monkeypatch, capsys, tmp_path):
    import dqdyn.cli as cli

    monkeypatch.setattr(cli, "benchmark_dirs", lambda: [tmp_path / "benchmarks"])
    err = _err(capsys, "bench", ["bench"])
    assert "source checkout" in err and str(tmp_path / "benchmarks") in err and "--dir" in err


def _sub(*args):
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "dqdyn.cli", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def test_subprocess_typo_and_missing_file(tmp_path):
    r = _sub("view", "two_lnik_arm")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "Did you mean 'two_link_arm'" in r.stderr
    r2 = _sub("sweep", str(tmp_path / "gone.urdf"), "--out", str(tmp_path / "o.zarr"),
              "--states", "4")
    r3 = _sub("info", str(tmp_path / "gone.urdf"))
    assert r2.returncode == r3.returncode == 2
    assert r2.stderr == r3.stderr and "no such file" in r3.stderr
