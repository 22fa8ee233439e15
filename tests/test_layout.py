import numpy as np
import pytest

from spare_fast import Layout


@pytest.mark.parametrize("kind", ["cyclic", "random", "sidon"])
@pytest.mark.parametrize(("n", "r"), [(13, 4), (50, 3), (31, 6), (7, 1)])
def test_spare_layouts_hold_every_type_r_times_and_layer0_is_a_permutation(kind, n, r):
    layout = getattr(Layout, kind)(n, r)
    s = layout.stacks
    assert s.shape == (n, r) and s.dtype == np.int32
    assert np.array_equal(np.sort(s[:, 0]), np.arange(n))
    assert (np.bincount(s.ravel(), minlength=n) == r).all()
    assert all(len(set(row)) == r for row in s.tolist())
    assert layout.n_types == n and layout.redundancy == r


def test_cyclic_rule():
    s = Layout.cyclic(7, 3).stacks
    g, l = np.meshgrid(np.arange(7), np.arange(3), indexing="ij")
    assert np.array_equal(s, (g + l) % 7)


def test_sidon_two_types_share_at_most_one_holder():
    layout = Layout.sidon(31, 6)
    holders = [set(h) for h in layout.holders().tolist()]
    for a in range(31):
        for b in range(a + 1, 31):
            assert len(holders[a] & holders[b]) <= 1


def test_sidon_too_small_names_smallest_valid_n():
    with pytest.raises(ValueError, match=r"smallest valid n_groups is r\(r-1\)\+1 = 21"):
        Layout.sidon(20, 5)


def test_replication_layout():
    layout = Layout.replication(7, 3)
    assert layout.stacks.ravel().tolist() == [0, 0, 0, 1, 1, 1]
    assert layout.n_types == 2 and layout.redundancy == 3 and layout.height == 1


def test_random_is_reproducible_by_seed():
    assert Layout.random(40, 4, seed=3) == Layout.random(40, 4, seed=3)
    assert Layout.random(40, 4, seed=3) != Layout.random(40, 4, seed=4)


def test_stacks_are_read_only():
    with pytest.raises(ValueError):
        Layout.cyclic(5, 2).stacks[0, 0] = 3


def test_holders_lists_groups_per_type():
    h = Layout.cyclic(5, 2).holders()
    assert h.tolist() == [[0, 4], [0, 1], [1, 2], [2, 3], [3, 4]]


def test_from_stacks_rejects_repeat_within_stack_naming_cell():
    with pytest.raises(ValueError, match=r"stacks\[1, 1\] = 1 repeats stacks\[1, 0\]"):
        Layout.from_stacks([[0, 1], [1, 1]])


def test_from_stacks_rejects_unequal_counts_naming_cell():
    with pytest.raises(
        ValueError, match=r"stacks\[1, 0\] = 1: type 1 is held 1 times, but type 0 is held 2 times"
    ):
        Layout.from_stacks([[0, 2], [1, 2], [2, 0]])


def test_from_stacks_rejects_negative_ids():
    with pytest.raises(ValueError, match=r"stacks\[1, 0\] = -1 is negative"):
        Layout.from_stacks([[0], [-1]])


def test_from_stacks_rejects_missing_type():
    with pytest.raises(ValueError, match="type 1 is held by no group"):
        Layout.from_stacks([[0, 2], [2, 0]])


def test_from_stacks_rejects_non_integers_and_bad_shapes():
    with pytest.raises(TypeError, match="float64"):
        Layout.from_stacks([[0.5, 1.0]])
    with pytest.raises(ValueError, match="2-D"):
        Layout.from_stacks([0, 1])


@pytest.mark.parametrize(("n", "r"), [(0, 1), (3, 0), (3, 4)])
def test_constructors_reject_bad_sizes(n, r):
    with pytest.raises(ValueError, match="n_groups|redundancy"):
        Layout.cyclic(n, r)


def test_constructors_reject_non_int_sizes():
    with pytest.raises(TypeError, match="n_groups"):
        Layout.cyclic(5.0, 2)


def test_from_stacks_leaves_the_callers_array_writable():
    a = np.array([[0, 1], [1, 0]], dtype=np.int32)  # C-contiguous int32: once shared, frozen
    layout = Layout.from_stacks(a)
    assert a.flags.writeable
    a[0, 0] = 1
    assert layout.stacks.tolist() == [[0, 1], [1, 0]]


@pytest.mark.parametrize("n, r", [(8, 8), (10, 9), (20, 18), (12, 11)])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_random_layout_exists_for_r_close_to_n(n, r, seed):
    layout = Layout.random(n, r, seed=seed)
    st = layout.stacks
    assert layout.kind == "random" and layout.redundancy == r
    assert st[:, 0].tolist() == list(range(n))
    for l in range(r):
        assert sorted(st[:, l].tolist()) == list(range(n))  # every layer a permutation
    assert all(len(set(row)) == r for row in st.tolist())  # distinct types per stack
    assert Layout.random(n, r, seed=seed) == layout  # seeded: the same layout again
