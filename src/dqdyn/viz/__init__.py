"""3-D view of dqdyn models in the browser (``pip install 'dqdyn[viz]'``: viser + trimesh).

>>> from dqdyn.viz import Viewer                                   # doctest: +SKIP
>>> v = Viewer(model, urdf="panda.urdf", package_dirs=["~/ws/src"])  # doctest: +SKIP
>>> v.update(q); v.show_twists(qd); v.play(traj.t, traj.q)          # doctest: +SKIP

Why viser rather than meshcat: viser is a maintained, pip-only package (meshcat-python's last
release is from 2023) that ships its built web client inside the wheel, works offline on a
loopback port, and has the scene-graph (``/parent/child`` nodes), GUI widgets (the trajectory
slider and play box), arrows and trimesh meshes built in; meshcat would need its own slider and
arrow code and speaks to the browser through a ZeroMQ relay process.

The viewer answers only its own page (``Host`` and ``Origin`` checked, ``allowed_origins`` to
widen) and reads mesh files only inside the URDF's folder and the package folders named
(``allow_outside`` to widen); see the docs' security page.
"""

from dqdyn.viz.geometry import Visual, inertia_box, inertia_boxes, mjcf_visuals, resolve_uri, skeleton, urdf_visuals
from dqdyn.viz.viewer import Viewer, view

__all__ = ["Viewer", "view", "Visual", "inertia_box", "inertia_boxes", "urdf_visuals", "mjcf_visuals",
           "resolve_uri", "skeleton"]
