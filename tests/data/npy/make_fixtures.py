#!/usr/bin/env python3
"""Writes the .npy fixtures of tests/datasets/npy_test.cpp, byte by byte (no numpy needed).

The well-formed ones reproduce numpy.save's bytes exactly (checked against numpy 2.4); the
malformed ones each break one rule. Run once from this folder; the outputs are committed.
"""
import struct

MAGIC = b"\x93NUMPY"


def numpy_header(descr, shape, fortran=False, version=1):
    """The header numpy writes: dict, growth-axis spaces, padding to 64 bytes, newline."""
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    text = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        repr(descr), "True" if fortran else "False", shape_text)
    if shape:
        text += " " * (21 - len(str(shape[-1] if fortran else shape[0])))
    prefix = len(MAGIC) + 2 + (2 if version == 1 else 4)
    pad = 64 - (prefix + len(text) + 1) % 64
    return raw_header(text + " " * pad + "\n", version)


def raw_header(text, version=1, minor=0):
    body = text.encode("latin1")
    size = struct.pack("<H", len(body)) if version == 1 else struct.pack("<I", len(body))
    return MAGIC + bytes([version, minor]) + size + body


def write(name, data):
    with open(name, "wb") as f:
        f.write(data)


F4_2X3 = struct.pack("<6f", 0.5, -1.25, 2.0, 3.0, 4.75, -6.0)

# Well-formed: numpy's exact bytes.
write("f4_2x3.npy", numpy_header("<f4", (2, 3)) + F4_2X3)
write("i8_5.npy", numpy_header("<i8", (5,)) + struct.pack("<5q", 1, -2, 3000000000, 4, -5))
# float16 as numpy writes it, the values rounded by Python's own binary16 packing ("e"): 1/3 and
# 0.1 round, 6e-8 is subnormal, 65504 the largest float16.
write("f2_2x3.npy", numpy_header("<f2", (2, 3)) + struct.pack("<6e", 0.5, -1.0 / 3.0, 65504.0, 6e-8, 0.1, -0.0))
write("f8_2x2_v2.npy", numpy_header("<f8", (2, 2), version=2) + struct.pack("<4d", 1.5, -2.5, 1e300, -0.0))
write("i4_3_v3.npy", numpy_header("<i4", (3,), version=3) + struct.pack("<3i", 7, -8, 2147483647))
write("u1_4.npy", numpy_header("|u1", (4,)) + bytes([0, 1, 200, 255]))
write("b1_2x2.npy", numpy_header("|b1", (2, 2)) + bytes([1, 0, 0, 1]))
write("i4_empty_0x3.npy", numpy_header("<i4", (0, 3)))

# Accepted variants numpy itself would not write.
write("u1_little_endian_mark.npy", numpy_header("<u1", (2,)) + bytes([9, 10]))
write("i4_native_mark.npy", numpy_header("=i4", (2,)) + struct.pack("<2i", -1, 1))
write("i8_python2_long.npy", raw_header("{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }" + " " * 11 + "\n")
      + struct.pack("<3q", 10, 20, 30))
# Data at offset 73: not a multiple of 4, so the reader must copy rather than map.
misaligned = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
write("f4_misaligned.npy", raw_header(misaligned + " " * (73 - 10 - len(misaligned) - 1) + "\n")
      + struct.pack("<2f", 1.0, -3.5))
write("f4_1d_fortran.npy", numpy_header("<f4", (3,), fortran=True) + struct.pack("<3f", 1, 2, 3))

# Malformed: one broken rule each.
write("bad_magic.npy", b"\x93NUMPX" + numpy_header("<f4", (2, 3))[6:] + F4_2X3)
write("version_4.npy", raw_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", version=4) + b"\0" * 8)
write("version_1_1.npy", raw_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", minor=1) + b"\0" * 8)
write("fortran_2x3.npy", numpy_header("<f4", (2, 3), fortran=True) + F4_2X3)
write("big_endian.npy", numpy_header(">f4", (2, 3)) + struct.pack(">6f", 0.5, -1.25, 2.0, 3.0, 4.75, -6.0))
write("complex.npy", numpy_header("<c8", (1,)) + b"\0" * 8)
write("structured.npy", raw_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n") + b"\0" * 4)
write("bad_dict.npy", raw_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}\n") + F4_2X3)
write("missing_shape.npy", raw_header("{'descr': '<f4', 'fortran_order': False, }\n") + F4_2X3)
write("extra_key.npy", raw_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1, }\n") + F4_2X3)
write("negative_shape.npy", raw_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }\n"))
write("truncated.npy", numpy_header("<f4", (2, 3)) + F4_2X3[:10])
write("trailing_bytes.npy", numpy_header("<f4", (2, 3)) + F4_2X3 + b"\0\0\0\0")
write("header_truncated.npy", (numpy_header("<f4", (2, 3)))[:40])
write("too_short.npy", b"\x93NUM")
write("scalar.npy", numpy_header("<f8", ()) + struct.pack("<d", 2.5))
write("f4_2x2x2.npy", numpy_header("<f4", (2, 2, 2)) + struct.pack("<8f", *range(8)))
write("bool_byte_2.npy", numpy_header("|b1", (3,)) + bytes([1, 2, 0]))
