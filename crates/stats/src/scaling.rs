//! Where a scaling series stops scaling: "SSDs no longer scale after 4 disks" ("SSD Performance"),
//! the same question for threads, queue depth or stripe width.
//!
//! The rule: the plateau is the first point i such that no later point beats y_i by more than
//! `min_gain` (relative to |y_i|):  max_{j > i} y_j ≤ y_i + min_gain · |y_i|.
//! Looking at all later points rather than the next step alone means one flat step followed by
//! more growth (a noisy measurement, or a controller that needs a second disk to fill a lane)
//! is not mistaken for the end of scaling, and a series that falls after its peak still
//! plateaus at the peak. The last point cannot be a plateau, since nothing after it shows
//! that growth stopped.

/// Index of the first point after which `ys` stops growing by more than `min_gain` (e.g. 0.05
/// for 5 %), for a series ordered by strictly increasing `xs` (disks, threads, …).
///
/// `None` when the series is still growing at its last point, and also for input that does not
/// describe a series: fewer than two points, lengths that differ, `xs` not strictly increasing,
/// a non-finite value, or a negative or non-finite `min_gain`.
pub fn plateau(xs: &[f64], ys: &[f64], min_gain: f64) -> Option<usize> {
    let valid = xs.len() == ys.len()
        && xs.len() >= 2
        && xs.iter().chain(ys).all(|v| v.is_finite())
        && xs.windows(2).all(|w| w[0] < w[1])
        && min_gain.is_finite()
        && min_gain >= 0.0;
    if !valid {
        return None;
    }
    // best_after[i] = max of ys[i + 1..], built from the right.
    let mut best_after = vec![f64::NEG_INFINITY; ys.len()];
    for i in (0..ys.len() - 1).rev() {
        best_after[i] = best_after[i + 1].max(ys[i + 1]);
    }
    (0..ys.len() - 1).find(|&i| best_after[i] <= ys[i] + min_gain * ys[i].abs())
}
