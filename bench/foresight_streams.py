# foresight's random streams in numpy, bit for bit: Philox4x32-10 and the
# key folding of core/include/foresight/core/rng.h, and from them the
# initial values and batch order of `foresight train --model dlrm`
# (autograd/src/module.cc GlorotUniform, trainer/src/dlrm_model.cc
# LayerKey, embed/src/initializer.cc InitializeRow, sampler/src/
# seed_order.cc + order_util.cc Shuffle). With them bench/dlrm_pytorch.py
# (--foresight-streams) starts from foresight's exact weights and visits
# foresight's exact batches, so the two students differ only in their
# arithmetic: a comparison free of seed noise. Never part of the product.
import numpy as np

M64 = (1 << 64) - 1
K_INIT, K_SHUFFLE = 1, 4  # RngPurpose


def mix64(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def from_seed(seed):
    return mix64(seed & M64)


def fold(key, value):
    return mix64(key ^ mix64((value + 0x632BE59BD9B4E019) & M64))


def philox(key, draw, element):
    """Philox4x32(key, ctr_hi=draw, ctr_lo=element) for arrays of elements: (x, y, z, w) uint64 arrays."""
    e = np.asarray(element, dtype=np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    c0 = e & m32
    c1 = e >> np.uint64(32)
    c2 = np.full_like(e, np.uint64(draw & 0xFFFFFFFF))
    c3 = np.full_like(e, np.uint64((draw >> 32) & 0xFFFFFFFF))
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0 = np.uint64(0xD2511F53) * c0
        p1 = np.uint64(0xCD9E8D57) * c2
        n0 = (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0)
        n2 = (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1)
        c1 = p1 & m32
        c3 = p0 & m32
        c0, c2 = n0, n2
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


def unit(word):
    """[0, 1) from a 32-bit word, 24 bits, as f32 (RngKey::Uniform)."""
    return (word >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)


def glorot_uniform(seed, layer, fan_in, fan_out):
    """Linear layer `layer`'s weight as foresight stores it: [in, out]."""
    key = fold(fold(from_seed(seed), K_INIT), layer)
    bound = np.float32(np.sqrt(6.0 / (fan_in + fan_out)))
    u = unit(philox(key, 0, np.arange(fan_in * fan_out, dtype=np.uint64))[0])
    return ((np.float32(2.0) * u - np.float32(1.0)) * bound).reshape(fan_in, fan_out)


def embedding_rows(seed, first_key, rows, dim, scale):
    """Rows first_key.. of a table collection (keys are the flat row numbers)."""
    key = from_seed(seed)
    keys = np.arange(first_key, first_key + rows, dtype=np.uint64)
    out = np.empty((rows, dim), np.float32)
    scale = np.float32(scale)
    for j in range(0, dim, 4):
        words = philox(key, j // 4, keys)
        for i in range(min(4, dim - j)):
            out[:, j + i] = (np.float32(2.0) * unit(words[i]) - np.float32(1.0)) * scale
    return out


def epoch_order(seed, epoch, begin, end):
    """The training rows begin..end in SeedOrder's order for `epoch` (Fisher-Yates, RngKey::Below)."""
    n = end - begin
    key = fold(fold(from_seed(seed), K_SHUFFLE), epoch)
    i = np.arange(n, dtype=np.uint64)
    x, y, _, _ = philox(key, 0, i)
    bound = i + np.uint64(1)
    # high 64 bits of r * bound, r = x << 32 | y, bound < 2^32
    hi = (x * bound + ((y * bound) >> np.uint64(32))) >> np.uint64(32)
    j = hi.astype(np.int64)
    p = np.arange(begin, end, dtype=np.int64)
    for k in range(n - 1, 0, -1):
        jk = j[k]
        p[k], p[jk] = p[jk], p[k]
    return p


def self_check():
    """Known answers: Random123's philox4x32-10 vector (tests/core/rng_test.cc) and values printed by
    core/include/foresight/core/rng.h compiled in C++ (FromSeed(1).Fold(1).Fold(2), its Bits(12345, 3) and
    Uniform(7, 0); FromSeed(1).Fold(4).Fold(0).Below(3999999, 3999998, 0))."""
    assert [int(v[0]) for v in philox(0, 0, [0])] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    k = fold(fold(from_seed(1), 1), 2)
    assert k == 17194767140951048757
    assert [int(v[0]) for v in philox(k, 3, [12345])] == [1943245492, 3028146014, 2012991043, 2255420786]
    assert abs(float(unit(philox(k, 0, [7])[0])[0]) - 0.720460355) < 1e-8
    x, y, _, _ = philox(fold(fold(from_seed(1), K_SHUFFLE), 0), 0, [3999998])
    assert (((int(x[0]) << 32) | int(y[0])) * 3999999) >> 64 == 223875
    print("foresight_streams: known answers match")


if __name__ == "__main__":
    self_check()
