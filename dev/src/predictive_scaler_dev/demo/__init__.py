"""`predictive-scaler demo`: the operator on the local cluster, replaying a real trace.

Not part of the operator: it drives the local control plane the way a user
would (apply objects, start `predictive-scaler run`, watch status) and
replays a bundled trace slice as the workload's CPU load.
"""
