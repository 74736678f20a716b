"""Cold objects packed small in memory: a Zstandard dictionary trained on the cluster's
own objects when a run starts on its store (Store.cool).

Pods are most of a big cluster, and a step reads few of them: the store keeps the rest as
bytes (sim/store.py). As JSON a bench pod is about 455 bytes; packed with a dictionary of
4 KiB trained on a sample of the cluster's objects it is about 42, and packing costs about
1.4 µs, unpacking 0.7 µs (measured on the 20,000-node bench cluster's 560,000 objects).
Without a dictionary Zstandard cannot do this: a single small document has too little of
itself to repeat, and what pods repeat is each other (field names, owners, conditions).

Only memory holds packed bytes: the file's rows stay the JSON they always were, so what a
run writes does not depend on the dictionary (SPEC X3).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a store is big enough to pack: 23 ms of every command
    import zstandard

# A dictionary is trained once there are this many cold objects: fewer are not worth
# packing (a small cluster's objects are a few MB, and training takes 50 ms).
PACK_FROM = 1_000
SAMPLES = 2_000  # objects the dictionary is trained on, taken evenly over all cold ones
DICT_SIZE = 4_096  # larger dictionaries packed the bench's pods no smaller
LEVEL = 3
# What every packed object starts with (a Zstandard frame); JSON never does, so a cold
# object's bytes say themselves whether they are packed.
MAGIC = b"\x28\xb5\x2f\xfd"


def even_sample(bodies: Iterable[object]) -> tuple[list[bytes], int]:
    """Up to 2 x SAMPLES of `bodies` taken at an even stride over all of them, in one
    pass (the stride doubles whenever the sample fills), and how many there were."""
    kept: list[bytes] = []
    stride, seen = 1, 0
    for seen, body in enumerate(bodies, 1):
        if (seen - 1) % stride == 0 and isinstance(body, bytes):
            kept.append(body)
            if len(kept) == 2 * SAMPLES:
                kept, stride = kept[::2], stride * 2
    return kept, seen


class Packer:
    """Packs and unpacks the bytes of cold objects with one trained dictionary.

    Not safe for two threads at once (nor is a Zstandard context): the store calls it
    only under its lock, as it does everything that reads or changes its objects."""

    def __init__(self, trained: zstandard.ZstdCompressionDict) -> None:
        import zstandard  # noqa: PLC0415 - see the imports above

        self._packer = zstandard.ZstdCompressor(
            level=LEVEL,
            dict_data=trained,
            write_checksum=False,
            write_content_size=True,
            write_dict_id=False,
        )
        self._unpacker = zstandard.ZstdDecompressor(dict_data=trained)
        self._unpack_error = zstandard.ZstdError

    @classmethod
    def for_bodies(cls, bodies: Iterable[object]) -> Packer | None:
        """A packer for the cold objects whose bodies these are (one pass over them),
        or None when there are fewer than PACK_FROM."""
        samples, count = even_sample(bodies)
        return cls.trained(samples) if count >= PACK_FROM else None

    @classmethod
    def trained(cls, samples: Sequence[bytes]) -> Packer | None:
        """A packer for objects like `samples`, or None when they are too alike or too
        small for a dictionary (the objects then stay as their JSON)."""
        import zstandard  # noqa: PLC0415 - see the imports above

        try:
            return cls(zstandard.train_dictionary(DICT_SIZE, list(samples)))
        except zstandard.ZstdError:
            return None

    def pack(self, body: bytes) -> bytes:
        # Copied out: Zstandard's answer keeps the whole buffer it was written into (the
        # JSON's size and more) behind a shorter length, which would save no memory.
        return bytes(memoryview(self._packer.compress(body)))

    def unpack(self, packed: bytes) -> bytes:
        """The bytes `pack` was given; ValueError for bytes it did not make."""
        try:
            return self._unpacker.decompress(packed)
        except self._unpack_error as exc:
            raise ValueError(f"packed bytes that do not unpack ({exc})") from None
