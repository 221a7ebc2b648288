# Writes the .npy fixtures of tests/frontend/test_files.cpp with NumPy.
# Run from this folder: /usr/bin/python3 make_fixtures.py
# The expected values are spelled out in the test; change both together.
import numpy as np

np.save("f32_2d.npy", np.array([[1.5, -2.0, 3.25], [0.0, 1e-3, -7.5]], dtype="<f4"))
np.save("f64_1d.npy", np.array([0.1, 2.5, -3.0, 1e100], dtype="<f8"))
np.save("i64_3d.npy", np.arange(24, dtype="<i8").reshape(2, 3, 4) - 12)
np.save("i32_1d.npy", np.array([-2147483648, 0, 2147483647], dtype="<i4"))
np.save("bool_1d.npy", np.array([True, False, True, True]))
np.save("f64_0d.npy", np.array(3.5, dtype="<f8"))
np.save("f32_empty.npy", np.zeros((0, 3), dtype="<f4"))
with open("f32_v2.npy", "wb") as f:
    np.lib.format.write_array(f, np.array([[1, 2], [3, 4]], dtype="<f4"), version=(2, 0))
np.save("fortran.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
np.save("fortran_3d.npy", np.asfortranarray(np.arange(24, dtype="<i8").reshape(2, 3, 4)))
np.save("big_endian.npy", np.array([1, 2, 3], dtype=">i4"))
np.save("u8.npy", np.array([1, 2], dtype="u1"))
np.save("f16_1d.npy", np.array([1, -2.5, 65504, 0.1, 6e-8], dtype="<f2"))
