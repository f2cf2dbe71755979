//! Which results of different runs measured the same workload: one rule for `compare`, the
//! report's comparison charts and its scaling charts, so they never disagree about what the
//! runs share.
//!
//! A result meets the result of another run with the same cell name, else the same workload
//! (rw, block size, threads, IOs in flight, read mix, sync, O_DSYNC, engine, direct IO); two
//! runs of one result each are compared whatever their workloads, since that is what the user
//! asked for (QD1 against QD32), and the differences are named. A database result is its load,
//! server, clients and I/O path.

use crate::model::{ResultDoc, RunDoc};

/// The workload's identity for matching; the fields `differences` names.
pub fn workload_fields(r: &ResultDoc) -> Vec<(&'static str, String)> {
    let w = &r.workload;
    if r.is_db() {
        // A database load: what ran, on which server, with how many clients, through which
        // path (its page is not a block size of its own).
        return vec![
            ("load", w.engine.clone()),
            ("server", r.db_server().unwrap_or("?").to_string()),
            ("clients", w.threads.to_string()),
            ("I/O path", r.io_path.clone()),
        ];
    }
    let mixed = matches!(w.rw.name(), "rw" | "randrw");
    vec![
        ("rw", w.rw.name().to_string()),
        // A block-size mix is its sizes and weights, never its smallest size alone.
        (
            "block size",
            w.bs_mix
                .as_ref()
                .map_or_else(|| crate::units::bs_label(w.bs), |m| m.label()),
        ),
        ("threads", w.threads.to_string()),
        ("iodepth", w.iodepth.to_string()),
        (
            "read mix",
            if mixed {
                format!("{}%", w.mix_read_pct)
            } else {
                "-".into()
            },
        ),
        ("sync", format!("{:?}/{:?}", w.sync, w.sync_every)),
        ("O_DSYNC", w.odsync.to_string()),
        ("engine", w.engine.clone()),
        ("direct", w.direct.to_string()),
    ]
}

pub fn differences(a: &ResultDoc, b: &ResultDoc) -> Vec<String> {
    workload_fields(a)
        .into_iter()
        .zip(workload_fields(b))
        .filter(|(x, y)| x.1 != y.1)
        .map(|(x, y)| format!("{} {} → {}", x.0, x.1, y.1))
        .collect()
}

pub fn matches(a: &ResultDoc, b: &ResultDoc) -> bool {
    match (&a.name, &b.name) {
        (Some(x), Some(y)) => x == y,
        _ => differences(a, b).is_empty(),
    }
}

/// The index of the result of `other` that measured what `base_result` (a result of `base`)
/// measured, by the rule above.
pub fn counterpart(base: &RunDoc, base_result: &ResultDoc, other: &RunDoc) -> Option<usize> {
    // The one load of its kind in each run, whatever server or clients: PostgreSQL against
    // MariaDB under the same TPC-C-derived load is what such a comparison asks (the storage
    // cells beside each load still match by workload).
    let only_load = |doc: &RunDoc| {
        let mut of_kind = doc.results.iter().enumerate().filter(|(_, r)| {
            r.is_db() && base_result.is_db() && r.workload.engine == base_result.workload.engine
        });
        match (of_kind.next(), of_kind.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    };
    other
        .results
        .iter()
        .position(|c| matches(base_result, c))
        .or_else(|| (base.results.len() == 1 && other.results.len() == 1).then_some(0))
        .or_else(|| only_load(base).and(only_load(other)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Rw;

    /// A TPC-C-derived result on `server`, named as the load names it.
    fn tpcc(server: &str, terminals: u32) -> ResultDoc {
        let mut r = crate::analysis::tests::result(Rw::Randrw, 8192, terminals, 1, 100.0);
        r.name = Some(format!("TPC-C-derived · {server} · {terminals} terminals"));
        r.workload.engine = "tpcc".into();
        r.tpcc = Some(Box::new(crate::model::TpccDoc {
            server: server.into(),
            ..Default::default()
        }));
        r
    }

    #[test]
    fn the_one_load_of_a_kind_in_each_run_meets_the_other_whatever_its_server() {
        let cell = || crate::analysis::tests::result(Rw::Randread, 8192, 4, 1, 5_000.0);
        let pg = crate::analysis::tests::doc(vec![tpcc("PostgreSQL", 4), cell()]);
        let maria = crate::analysis::tests::doc(vec![cell(), tpcc("MariaDB", 8)]);
        assert_eq!(counterpart(&pg, &pg.results[0], &maria), Some(1));
        assert_eq!(
            differences(&pg.results[0], &maria.results[1]),
            ["server PostgreSQL → MariaDB", "clients 4 → 8"]
        );
        // The storage cells still meet by workload.
        assert_eq!(counterpart(&pg, &pg.results[1], &maria), Some(0));
        // Two loads of the kind in a run (a buffer sweep): which one is meant is not guessed.
        let two =
            crate::analysis::tests::doc(vec![tpcc("MariaDB", 8), tpcc("MariaDB", 16), cell()]);
        assert_eq!(counterpart(&pg, &pg.results[0], &two), None);
    }
}
