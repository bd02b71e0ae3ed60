"""The ``dqdyn`` command line: ``info`` output, errors, ``--version``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import dqdyn
from dqdyn.cli import build_parser, main
from dqdyn.parsers import bundled


def test_info_bundled_two_link_arm(capsys):
    assert main(["info", "--bundled", "two_link_arm"]) == 0
    out = capsys.readouterr().out
    for s in ("shoulder", "elbow", "link1", "link2", "world", "revolute", "1.8", "nq = 2",
              "nv = 2", "frames = 5", "total mass"):
        assert s in out, s
    assert "Frames of" not in out
    assert main(["info", "--bundled", "two_link_arm", "--frames"]) == 0
    out = capsys.readouterr().out
    assert "Frames of two_link_arm" in out and "base_link" in out and "tool" in out


def test_info_file_with_planar_root(capsys):
    assert main(["info", str(bundled("diff_drive_manipulator")), "--root", "planar"]) == 0
    out = capsys.readouterr().out
    for s in ("root_joint", "planar", "left_wheel_joint", "wrist_3_joint", "nq = 11", "nv = 11",
              "39.29", "0:3"):
        assert s in out, s


def test_info_shows_mimic_joints(capsys, tmp_path):
    doc = """<robot name="g">
      <link name="b"/><link name="f1"><inertial><mass value="0.1"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
      <link name="f2"><inertial><mass value="0.1"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
      <joint name="finger1" type="prismatic"><parent link="b"/><child link="f1"/>
        <axis xyz="0 1 0"/><limit lower="0" upper="0.04" velocity="0.2" effort="20"/></joint>
      <joint name="finger2" type="prismatic"><parent link="b"/><child link="f2"/>
        <axis xyz="0 -1 0"/><limit lower="0" upper="0.04" velocity="0.2" effort="20"/>
        <mimic joint="finger1" multiplier="1" offset="0"/></joint>
    </robot>"""
    f = tmp_path / "gripper.urdf"
    f.write_text(doc)
    assert main(["info", str(f)]) == 0
    out = capsys.readouterr().out
    assert "q[finger1]" in out and "nq = 1" in out and "mimic joints = 1" in out
    assert main(["info", str(f), "--mimic", "independent"]) == 0
    cap = capsys.readouterr()
    assert "nq = 2" in cap.out
    assert cap.err.startswith("dqdyn: warning:") and "independent" in cap.err
    assert main(["info", str(f), "--mimic", "error"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "finger2" in err


def test_bad_files_give_one_line_and_exit_2(capsys, tmp_path):
    assert main(["info", str(tmp_path / "missing.urdf")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dqdyn: error:") and "missing.urdf" in err and err.count("\n") == 1
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'></robot>")
    assert main(["info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "XML syntax error" in err and err.count("\n") == 1 and "Traceback" not in err
    assert main(["info", "--bundled", "nope"]) == 2
    assert "'nope'" in capsys.readouterr().err
    assert main(["info"]) == 2
    assert main([]) == 2  # no command: help on stderr


def test_usage_errors_and_version(capsys):
    with pytest.raises(SystemExit) as ei:
        main(["--version"])
    assert ei.value.code == 0
    assert capsys.readouterr().out.strip() == f"dqdyn {dqdyn.__version__}"
    with pytest.raises(SystemExit) as ei:
        main(["info", "x.urdf", "--root", "spherical"])
    assert ei.value.code == 2
    with pytest.raises(SystemExit) as ei:
        main(["frobnicate"])
    assert ei.value.code == 2


def test_parser_has_subcommands():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert "info" in sub.choices


def test_module_entry_point_subprocess(tmp_path):
    env = dict(os.environ, COLUMNS="200")
    r = subprocess.run([sys.executable, "-m", "dqdyn.cli", "info", "--bundled", "branched"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "head_joint" in r.stdout and "antenna_joint" in r.stdout and "6.4" in r.stdout
    r = subprocess.run([sys.executable, "-m", "dqdyn.cli", "info", str(tmp_path / "nope.urdf")],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and r.stderr.startswith("dqdyn: error:")


# ------------------------------------------------------------ simulate / reproduce / bench
def test_simulate_command_plot_and_save(capsys, tmp_path):
    png, npz = tmp_path / "out.png", tmp_path / "traj.npz"
    assert main(["simulate", "--bundled", "two_link_arm", "--duration", "0.05", "--dt", "1e-3",
                 "--controller", "pd", "--plot", str(png), "--save", str(npz)]) == 0
    out = capsys.readouterr().out
    assert "51 samples" in out and png.stat().st_size > 1000
    from dqdyn.simulation import Trajectory

    assert Trajectory.load(npz).q.shape == (51, 2)
    assert main(["simulate", "--bundled", "two_link_arm", "--dt", "-1"]) == 2
    assert "dqdyn: error:" in capsys.readouterr().err


def test_reproduce_command_one_case(capsys, tmp_path):
    assert main(["reproduce", "jaco", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "CMC of dqdyn against MuJoCo" in out and "6-DoF arm" in out
    assert (tmp_path / "results.md").exists() and (tmp_path / "jaco.png").exists()
    assert main(["reproduce", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown case" in capsys.readouterr().err


def test_bench_without_scripts_is_an_error(capsys, tmp_path):
    assert main(["bench", "--dir", str(tmp_path)]) == 2
    assert "--dir" in capsys.readouterr().err


def test_new_subcommands_registered():
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {"simulate", "reproduce", "demo", "bench"} <= set(sub.choices)
