"""Sample media files for the upload tests, made at test time (nothing is committed):
byte strings that start with the magic bytes tw-post and the sandbox look at
(JPEG, PNG, GIF, WEBP, MP4, MOV) followed by deterministic pseudo-random filler,
so two samples of different seeds never share a sha256 and a segment sent twice
or out of order changes the assembled file's hash.

    from media_samples import sample, write_sample, write_sparse
    data = sample("png", 300_000, seed=1)
    digest = write_sample(tmp_path / "a.png", "png", 300_000, seed=1)   # sha256 hex
    write_sparse(tmp_path / "big.jpg", "jpeg", 5 * 2**20 + 1)           # header, then a hole
"""
import hashlib
import random
import struct

MIB = 1024 * 1024

# media type each sample kind must be uploaded as (by its magic bytes)
MEDIA_TYPES = {"jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "gif87": "image/gif",
               "webp": "image/webp", "mp4": "video/mp4", "mov": "video/quicktime"}


def header(kind, size):
    """The first bytes of a file of this kind and total size."""
    if kind == "jpeg":
        return b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    if kind == "png":
        return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + struct.pack(">II", 64, 64) + b"\x08\x02\x00\x00\x00"
    if kind == "gif":
        return b"GIF89a" + struct.pack("<HH", 64, 64) + b"\x00\x00\x00"
    if kind == "gif87":
        return b"GIF87a" + struct.pack("<HH", 64, 64) + b"\x00\x00\x00"
    if kind == "webp":
        return b"RIFF" + struct.pack("<I", max(size - 8, 0)) + b"WEBPVP8 "
    if kind in ("mp4", "mov"):
        brand = b"isom" if kind == "mp4" else b"qt  "
        ftyp = b"ftyp" + brand + b"\x00\x00\x02\x00" + brand + (b"mp41" if kind == "mp4" else b"qt  ")
        ftyp = struct.pack(">I", len(ftyp) + 4) + ftyp
        return ftyp + struct.pack(">I", max(size - len(ftyp), 8)) + b"mdat"
    raise ValueError("unknown sample kind %r" % kind)


def sample(kind, size, seed=0):
    """`size` bytes: the kind's header, then filler from a PRNG seeded with `seed`."""
    head = header(kind, size)
    assert size >= len(head), (kind, size)
    return head + random.Random("%s:%s" % (kind, seed)).randbytes(size - len(head))


def write_sample(path, kind, size, seed=0, chunk=4 * MIB):
    """Writes sample(kind, size, seed) to `path` a chunk at a time (memory stays small
    for the 50 MiB video) and returns its sha256 (hex)."""
    head = header(kind, size)
    rng = random.Random("%s:%s" % (kind, seed))
    h = hashlib.sha256()
    with open(path, "wb") as f:
        f.write(head)
        h.update(head)
        left = size - len(head)
        while left > 0:
            n = min(chunk, left)
            block = rng.randbytes(n)
            f.write(block)
            h.update(block)
            left -= n
    return h.hexdigest()


def write_sparse(path, kind, size):
    """A file of `size` bytes that is the kind's header followed by a hole (no disk used)."""
    with open(path, "wb") as f:
        f.write(header(kind, size))
        f.truncate(size)
    return path


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            h.update(block)
    return h.hexdigest()
