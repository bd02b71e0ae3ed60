"""Kinematics: forward kinematics and frame poses (`forward`), twist and pose Jacobians and
their time derivatives (`jacobians`), and the configuration space — integrate, difference,
neutral and random configurations (`configuration`).  The public names are ``dqdyn``'s."""
