"""nlid_core: identification of nonlinear single-DOF mechanical systems."""

__version__ = "0.1.0"
