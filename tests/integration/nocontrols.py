#!/usr/bin/env python3
"""nocontrols.py FILE MARKER...: FILE (a terminal output or a text log) holds no control
character: no C0 but newline (and tab), no DEL, no C1 (U+0080-U+009F, as UTF-8 or as a raw byte),
no bidi control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), no byte that is not
UTF-8. Each MARKER must occur in FILE, so that the hostile text was really shown (cleaned).
Exits 1 with the first offence."""
import sys

data = open(sys.argv[1], "rb").read()
try:
    text = data.decode("utf-8")
except UnicodeDecodeError as e:
    print(f"{sys.argv[1]}: not UTF-8 at byte {e.start}: {data[max(0, e.start - 20):e.start + 20]!r}")
    sys.exit(1)
bidi = {0x061C, 0x200E, 0x200F} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))
for i, ch in enumerate(text):
    c = ord(ch)
    if (c < 0x20 and ch not in "\n\t") or 0x7F <= c <= 0x9F or c in bidi:
        print(f"{sys.argv[1]}: control U+{c:04X} at {i}: {text[max(0, i - 30):i + 30]!r}")
        sys.exit(1)
for m in sys.argv[2:]:
    if m not in text:
        print(f"{sys.argv[1]}: marker {m!r} not found; the hostile text was not exercised")
        sys.exit(1)
