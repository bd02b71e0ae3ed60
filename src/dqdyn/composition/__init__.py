"""Modular composition: assemblies of modules (`modular`), the interconnection graph of
[Silva2022thesis, ch. 5] (`interconnection`, with its compiled walk in ``_graph_kernel``) and
black-box modules known only by their wrench response (`blackbox`)."""
