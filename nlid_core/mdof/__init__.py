"""Multi-DOF models with a full, configuration-dependent mass matrix."""
