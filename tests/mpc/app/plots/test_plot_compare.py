"""The variant comparison figure shows each variant's runs."""

import numpy as np

from mpc.app.plots.compare import VariantRuns, variants_figure


def test_one_box_and_one_point_per_run_for_each_variant():
    variants = [VariantRuns("fd", np.array([20.0, 22.0, 30.0]), [0.4, 0.5], [1764.0, 1764.0],
                            [True, False]),
                VariantRuns("analytic", np.array([2.0, 2.5]), [0.3], [0.0], [True])]
    axes = {ax.get_label(): ax for ax in variants_figure(variants).axes}
    box_medians = [ln.get_ydata()[0] for ln in axes["derivative_ms"].get_lines()
                   if ln.get_label() == "_nolegend_" and len(ln.get_ydata()) == 2
                   and ln.get_ydata()[0] == ln.get_ydata()[1]]
    assert 22.0 in box_medians and 2.25 in box_medians
    for key in ("mean_cost", "sims_per_call"):
        points = {c.get_label(): c.get_offsets() for c in axes[key].collections}
        assert set(points) == {"fd", "analytic"}
        np.testing.assert_array_equal(points["fd"][:, 0], [1, 1])
        np.testing.assert_array_equal(points["analytic"][:, 1],
                                      getattr(variants[1], key))
    colors = axes["mean_cost"].collections[0].get_facecolors()
    assert colors[0][1] > colors[0][0] and colors[1][0] > colors[1][1]  # green, then red
    assert [t.get_text() for t in axes["mean_cost"].get_xticklabels()] == ["fd", "analytic"]
