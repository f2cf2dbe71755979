//! The consistency conditions of the TPC-C specification (clause 3.3.2.1 to 3.3.2.4), checked
//! on the database after a run: what the transactions wrote must still add up. A driver or a
//! server that lost or doubled a write — or storage that did — fails them.

use super::sql::Conn;
use crate::model::TpccCheck;
use anyhow::{anyhow, Result};
use std::collections::BTreeMap;

type Key = (u64, u64);

/// Rows of (key columns…, value) as numbers keyed by their first `k` columns.
fn keyed(c: &mut Conn, sql: &str) -> Result<BTreeMap<Key, f64>> {
    let rows = c.rows(sql).map_err(|e| anyhow!("{e}"))?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let n = |i: usize| r.get(i).cloned().flatten()?.parse::<f64>().ok();
            let k = match r.len() {
                2 => (n(0)? as u64, 0),
                _ => (n(0)? as u64, n(1)? as u64),
            };
            Some((k, n(r.len() - 1)?))
        })
        .collect())
}

fn place((w, d): Key) -> String {
    match d {
        0 => format!("warehouse {w}"),
        _ => format!("warehouse {w} district {d}"),
    }
}

/// Where `a` and `b` (each by place) differ, as "PLACE: A_NAME = a, B_NAME = b (off by x)";
/// a place missing from one side counts as 0 there.
fn differ(
    a: &BTreeMap<Key, f64>,
    b: &BTreeMap<Key, f64>,
    names: (&str, &str),
    places: &[Key],
) -> Vec<String> {
    places
        .iter()
        .filter_map(|k| {
            let (x, y) = (
                a.get(k).copied().unwrap_or(0.0),
                b.get(k).copied().unwrap_or(0.0),
            );
            ((x - y).abs() > 0.004).then(|| {
                format!(
                    "{}: {} = {}, {} = {} (off by {})",
                    place(*k),
                    names.0,
                    trim(x),
                    names.1,
                    trim(y),
                    trim((x - y).abs())
                )
            })
        })
        .collect()
}

/// A number as the database had it: whole numbers without decimals, money with two.
fn trim(x: f64) -> String {
    match x.fract() == 0.0 {
        true => format!("{x:.0}"),
        false => format!("{x:.2}"),
    }
}

/// Checks the four conditions; each with the places where it did not hold.
pub fn check(c: &mut Conn) -> Result<Vec<TpccCheck>> {
    let w_ytd = keyed(c, "SELECT w_id, w_ytd FROM warehouse")?;
    let d_ytd = keyed(c, "SELECT d_w_id, SUM(d_ytd) FROM district GROUP BY d_w_id")?;
    let warehouses: Vec<Key> = w_ytd.keys().copied().collect();
    let next = keyed(c, "SELECT d_w_id, d_id, d_next_o_id - 1 FROM district")?;
    let districts: Vec<Key> = next.keys().copied().collect();
    let max_o = keyed(
        c,
        "SELECT o_w_id, o_d_id, MAX(o_id) FROM orders GROUP BY o_w_id, o_d_id",
    )?;
    let max_no = keyed(
        c,
        "SELECT no_w_id, no_d_id, MAX(no_o_id) FROM new_order GROUP BY no_w_id, no_d_id",
    )?;
    let span_no = keyed(
        c,
        "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1 FROM new_order GROUP BY no_w_id, no_d_id",
    )?;
    let count_no = keyed(
        c,
        "SELECT no_w_id, no_d_id, COUNT(*) FROM new_order GROUP BY no_w_id, no_d_id",
    )?;
    let ol_cnt = keyed(
        c,
        "SELECT o_w_id, o_d_id, SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id",
    )?;
    let ol_rows = keyed(
        c,
        "SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id",
    )?;
    // A district whose new orders were all delivered has no MAX(no_o_id): the condition's
    // second half speaks of none there.
    let with_new: Vec<Key> = districts
        .iter()
        .copied()
        .filter(|k| max_no.contains_key(k))
        .collect();
    // One line per district, with each side that disagrees with D_NEXT_O_ID - 1.
    let second: Vec<String> = districts
        .iter()
        .filter_map(|k| {
            let want = next.get(k).copied().unwrap_or(0.0);
            let off: Vec<String> = [("max(O_ID)", max_o.get(k)), ("max(NO_O_ID)", max_no.get(k))]
                .iter()
                .filter_map(|(name, v)| {
                    let v = (*v).copied()?;
                    ((v - want).abs() > 0.004).then(|| {
                        format!("{name} = {} (off by {})", trim(v), trim((v - want).abs()))
                    })
                })
                .collect();
            // A district with no orders at all has no max(O_ID): that is off by all of them.
            let off = match (off.is_empty(), max_o.contains_key(k)) {
                (true, false) if want > 0.0 => vec![format!("no orders (off by {})", trim(want))],
                _ => off,
            };
            (!off.is_empty()).then(|| {
                format!(
                    "{}: D_NEXT_O_ID - 1 = {}, {}",
                    place(*k),
                    trim(want),
                    off.join(", ")
                )
            })
        })
        .collect();
    Ok(vec![
        TpccCheck {
            clause: "3.3.2.1".into(),
            condition: "W_YTD = sum(D_YTD) of the warehouse's districts".into(),
            checked: warehouses.len() as u64,
            failures: differ(&w_ytd, &d_ytd, ("W_YTD", "sum(D_YTD)"), &warehouses),
        },
        TpccCheck {
            clause: "3.3.2.2".into(),
            condition: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) in each district".into(),
            checked: districts.len() as u64,
            failures: second,
        },
        TpccCheck {
            clause: "3.3.2.3".into(),
            condition: "max(NO_O_ID) - min(NO_O_ID) + 1 = the district's NEW-ORDER rows".into(),
            checked: with_new.len() as u64,
            failures: differ(
                &span_no,
                &count_no,
                ("max(NO_O_ID) - min(NO_O_ID) + 1", "rows in NEW-ORDER"),
                &with_new,
            ),
        },
        TpccCheck {
            clause: "3.3.2.4".into(),
            condition: "sum(O_OL_CNT) = the district's ORDER-LINE rows".into(),
            checked: districts.len() as u64,
            failures: differ(
                &ol_cnt,
                &ol_rows,
                ("sum(O_OL_CNT)", "rows in ORDER-LINE"),
                &districts,
            ),
        },
    ])
}

/// The failed conditions in one line each, for the run's failure; `None` when all held.
pub fn failure(checks: &[TpccCheck]) -> Option<String> {
    let failed: Vec<String> = checks
        .iter()
        .filter(|c| !c.failures.is_empty())
        .map(|c| {
            let more = match c.failures.len() {
                1 => String::new(),
                n => format!(
                    " (and {} more place{})",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                ),
            };
            format!(
                "consistency condition {} ({}) failed: {}{more}",
                c.clause, c.condition, c.failures[0]
            )
        })
        .collect();
    (!failed.is_empty()).then(|| failed.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_names_the_place_both_sides_and_how_far_apart() {
        let a = BTreeMap::from([((1, 3), 3006.0), ((1, 4), 3001.0)]);
        let b = BTreeMap::from([((1, 3), 3005.0), ((1, 4), 3001.0)]);
        let d = differ(&a, &b, ("D_NEXT_O_ID - 1", "max(O_ID)"), &[(1, 3), (1, 4)]);
        assert_eq!(
            d,
            ["warehouse 1 district 3: D_NEXT_O_ID - 1 = 3006, max(O_ID) = 3005 (off by 1)"]
        );
        let checks = vec![TpccCheck {
            clause: "3.3.2.2".into(),
            condition: "x".into(),
            checked: 10,
            failures: d,
        }];
        let f = failure(&checks).unwrap();
        assert!(
            f.starts_with("consistency condition 3.3.2.2 (x) failed: warehouse 1 district 3"),
            "{f}"
        );
        let money = differ(
            &BTreeMap::from([((2, 0), 300_010.5)]),
            &BTreeMap::from([((2, 0), 300_000.0)]),
            ("W_YTD", "sum(D_YTD)"),
            &[(2, 0)],
        );
        assert_eq!(
            money,
            ["warehouse 2: W_YTD = 300010.50, sum(D_YTD) = 300000 (off by 10.50)"]
        );
    }
}
