"""Independent safetensors reader (Python standard library only), used by TestSave_ReadByPython.

Written from the format description (8-byte little-endian header length, JSON header, raw little-endian data);
prints the metadata and every tensor in name order: name, dtype, shape, values.
"""
import json
import struct
import sys

FORMATS = {"F64": "d", "F32": "f", "I64": "q", "I32": "i", "I16": "h", "I8": "b",
           "U64": "Q", "U32": "I", "U16": "H", "U8": "B"}

with open(sys.argv[1], "rb") as f:
    raw = f.read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n].decode("utf-8"))
data = raw[8 + n:]
for k, v in sorted(header.pop("__metadata__", {}).items()):
    print("__metadata__ %s=%s" % (k, v))
for name in sorted(header):
    e = header[name]
    begin, end = e["data_offsets"]
    count = 1
    for d in e["shape"]:
        count *= d
    values = list(struct.unpack("<%d%s" % (count, FORMATS[e["dtype"]]), data[begin:end]))
    print("%s %s %s %s" % (name, e["dtype"], e["shape"], values))
