"""The pipelines: the one place that knows the order of the stages, one module per input
form, meeting at `Program`.

    helion.py        Helion kernel -> TileProgram -> ... -> Schedule  (the stages in order)
    lowered.py       Schedule -> Program -> TT-Lang on tt-lang-sim; Program -> simulator
    cuda.py          .cu file -> TilePlan -> TileFlow -> Task -> Physical -> [Program]
    cuda_policies.py the CUDA path's annotation space, ranked by its model
    refine.py        the simulator's fastest of the model's top k (after solving)
    cached.py        the compile path `loom.compile` and the CLI share, through
    tracecache.py    the on-disk cache of traced kernels and compile results
    stages.py        the stage log both pipelines time themselves with

A third input form gets a module here that produces `Program`s (as `cuda.py` does) or a
`TileProgram` (as the Helion frontend does); everything after `Program` (TT-Lang,
tt-lang-sim, the simulator) serves it unchanged. The modules are imported one by one,
never through this package, so the CLI and `import loom` stay cheap.
"""
