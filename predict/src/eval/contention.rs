//! `eval lock`, `eval combining`, `eval queue`, `eval office-hours`, `eval binning`.

use clap::Args;
use models::binning::{costs, BinningInputs, Strategy};
use models::contention::{
    combining as combine, office_hours as visits, per_bucket_time_s, queue as queue_model,
    SerializedLock, Service,
};

use super::derivation::{plain, q, Derivation};
use super::Figures;
use crate::args::{self, Time};

/// A serialized lock: throughput 1/t_crit whatever the thread count.
#[derive(Debug, Args)]
pub struct LockArgs {
    /// Time the lock is held per operation (contended), e.g. 600ns
    /// [default: the profile's t_crit_s].
    #[arg(long, value_parser = args::time)]
    pub t_crit: Option<Time>,
    /// Work per operation outside the lock.
    #[arg(long, default_value = "0s", value_parser = args::time)]
    pub t_work: Time,
    /// Operations.
    #[arg(long, value_parser = args::number)]
    pub ops: f64,
    /// Threads.
    #[arg(long, value_parser = args::number)]
    pub threads: f64,
    /// Independent locks (one per bucket); 1 is a global lock.
    #[arg(long, default_value = "1", value_parser = args::number)]
    pub buckets: f64,
}

pub fn lock(a: &LockArgs, f: &Figures) -> anyhow::Result<Derivation> {
    models::error::count("buckets", a.buckets)?;
    models::error::count("threads", a.threads)?;
    models::error::count("ops", a.ops)?;
    let mut d = Derivation::new("lock", "contention on locks (lecture §2.8, §4.5)");
    let tc = f.time(&mut d, a.t_crit, "t-crit", "t_crit_s", None)?;
    let tw = a
        .t_work
        .seconds("t-work", f.clock(&mut d, a.t_work, None))?;
    let l = SerializedLock::new(tc, tw)?;
    d.input("t_crit_s", tc, "s")
        .input("t_work_s", tw, "s")
        .input("ops", a.ops, "");
    d.input("threads", a.threads, "")
        .input("buckets", a.buckets, "");
    d.num(
        "max_throughput_per_s",
        "1 / t_crit (any thread count)",
        format!("1 / {}", q(tc, "s")),
        l.max_throughput(),
        "op/s",
    );
    d.num(
        "saturation_threads",
        "(t_crit + t_work) / t_crit",
        format!("({} + {}) / {}", q(tc, "s"), q(tw, "s"), q(tc, "s")),
        l.saturation_threads(),
        "",
    );
    d.num(
        "global_lock_time_s",
        "max(n·t_crit, ⌈n/p⌉·(t_crit + t_work)), the busiest thread doing ⌈n/p⌉ operations",
        format!(
            "max({}·{}, ⌈{}/{}⌉·({} + {}))",
            plain(a.ops),
            q(tc, "s"),
            plain(a.ops),
            plain(a.threads),
            q(tc, "s"),
            q(tw, "s"),
        ),
        l.time_s(a.ops, a.threads)?,
        "s",
    );
    d.num(
        "bucket_locks_time_s",
        "max(n·t_crit / min(p, buckets), ⌈n/p⌉·(t_crit + t_work)) (ideal: no line migration)",
        format!(
            "max({}·{} / min({}, {}), ⌈{}/{}⌉·({} + {}))",
            plain(a.ops),
            q(tc, "s"),
            plain(a.threads),
            plain(a.buckets),
            plain(a.ops),
            plain(a.threads),
            q(tc, "s"),
            q(tw, "s"),
        ),
        per_bucket_time_s(&l, a.ops, a.threads, a.buckets)?,
        "s",
    );
    d.num(
        "last_arrival_wait_s",
        "(min(p, n) − 1)·t_crit when all threads with an operation arrive at once",
        format!(
            "(min({}, {}) − 1)·{}",
            plain(a.threads),
            plain(a.ops),
            q(tc, "s")
        ),
        l.wait_s(a.threads.min(a.ops) - 1.0)?,
        "s",
    );
    Ok(d)
}

/// Flat against tree combining of P contributions.
#[derive(Debug, Args)]
pub struct CombiningArgs {
    /// Contributors P.
    #[arg(long, value_parser = args::number)]
    pub p: f64,
    /// Time of one combining operation.
    #[arg(long, value_parser = args::time)]
    pub t_op: Time,
    /// Fan-in of the tree.
    #[arg(long, default_value = "2", value_parser = args::number)]
    pub fan_in: f64,
}

pub fn combining(a: &CombiningArgs) -> anyhow::Result<Derivation> {
    let t = a.t_op.seconds("t-op", None)?;
    let c = combine(a.p, a.fan_in, t)?;
    let mut d = Derivation::new(
        "combining",
        "flat against tree-structured combining (lecture §2.8)",
    );
    d.input("p", a.p, "")
        .input("t_op_s", t, "s")
        .input("fan_in", a.fan_in, "");
    d.num(
        "levels",
        "⌈log_k P⌉",
        format!("⌈log_{} {}⌉", plain(a.fan_in), plain(a.p)),
        c.levels,
        "",
    );
    d.grouped(
        Some("flat"),
        "latency_s",
        "t_op (uncontended)",
        q(t, "s"),
        c.flat_latency_s,
        "s",
    );
    d.grouped(
        Some("flat"),
        "all_s",
        "P·t_op (serialized at one location)",
        format!("{}·{}", plain(a.p), q(t, "s")),
        c.flat_all_s,
        "s",
    );
    d.grouped(
        Some("flat"),
        "hotspot_requests",
        "P",
        plain(a.p),
        c.flat_hotspot,
        "",
    );
    d.grouped(
        Some("tree"),
        "latency_s",
        "max(levels, 1)·t_op (one combining step even without a tree)",
        format!("max({}, 1)·{}", plain(c.levels), q(t, "s")),
        c.tree_latency_s,
        "s",
    );
    d.grouped(
        Some("tree"),
        "all_s",
        "max(levels, 1)·min(k, P)·t_op",
        format!(
            "max({}, 1)·min({}, {})·{}",
            plain(c.levels),
            plain(a.fan_in),
            plain(a.p),
            q(t, "s")
        ),
        c.tree_all_s,
        "s",
    );
    d.grouped(
        Some("tree"),
        "hotspot_requests",
        "min(k, P)",
        format!("min({}, {})", plain(a.fan_in), plain(a.p)),
        c.tree_hotspot,
        "",
    );
    Ok(d)
}

/// Single-server queues: M/M/1 and M/D/1.
#[derive(Debug, Args)]
pub struct QueueArgs {
    /// Arrival rate λ, per second.
    #[arg(long, value_parser = args::number)]
    pub arrival_rate: f64,
    /// Service rate μ, per second.
    #[arg(long, value_parser = args::number)]
    pub service_rate: f64,
}

pub fn queue(a: &QueueArgs) -> anyhow::Result<Derivation> {
    let (l, m) = (a.arrival_rate, a.service_rate);
    let mut d = Derivation::new(
        "queue",
        "single-server queue with Poisson arrivals (lecture §2.8, §4.5)",
    );
    d.input("arrival_rate", l, "/s")
        .input("service_rate", m, "/s");
    let cases = [
        (
            "mm1",
            Service::Exponential,
            "W_q = ρ/(μ − λ) (exponential service)",
        ),
        (
            "md1",
            Service::Deterministic,
            "W_q = ρ/(2μ(1 − ρ)) (constant service)",
        ),
    ];
    for (g, service, formula) in cases {
        let r = queue_model(l, m, service)?;
        let g = Some(g);
        let rho = d.grouped(
            g,
            "utilization",
            "ρ = λ/μ",
            format!("({}) / ({})", q(l, "/s"), q(m, "/s")),
            r.utilization,
            "",
        );
        let wait_sub = match service {
            Service::Exponential => {
                format!("{} / (({}) − ({}))", plain(rho), q(m, "/s"), q(l, "/s"))
            }
            Service::Deterministic => {
                format!("{} / (2·({})·(1 − {}))", plain(rho), q(m, "/s"), plain(rho))
            }
        };
        d.grouped(g, "wait_s", formula, wait_sub, r.wait_s, "s");
        d.grouped(
            g,
            "response_s",
            "W = W_q + 1/μ",
            format!("{} + 1/({})", q(r.wait_s, "s"), q(m, "/s")),
            r.response_s,
            "s",
        );
        d.grouped(
            g,
            "queue_length",
            "L_q = λ·W_q",
            format!("({})·{}", q(l, "/s"), q(r.wait_s, "s")),
            r.queue_length,
            "",
        );
    }
    Ok(d)
}

/// The office-hours example: walk, wait, answer.
#[derive(Debug, Args)]
pub struct OfficeHoursArgs {
    /// When each student leaves, comma-separated, e.g. 0,0,0,0,0 or 0min,90min.
    #[arg(long, value_parser = args::time, value_delimiter = ',', default_value = "0,0,0,0,0")]
    pub leave_times: Vec<Time>,
    /// Walk to the office.
    #[arg(long, default_value = "5min", value_parser = args::time)]
    pub walk: Time,
    /// Length of one answer.
    #[arg(long, default_value = "5min", value_parser = args::time)]
    pub answer: Time,
}

pub fn office_hours(a: &OfficeHoursArgs) -> anyhow::Result<Derivation> {
    let leave: Vec<f64> = a
        .leave_times
        .iter()
        .map(|t| t.seconds("leave-times", None))
        .collect::<anyhow::Result<_>>()?;
    let walk = a.walk.seconds("walk", None)?;
    let answer = a.answer.seconds("answer", None)?;
    let v = visits(&leave, walk, answer)?;
    let mut d = Derivation::new(
        "office-hours",
        "office hours: one professor, first come first served (lecture §2.8)",
    );
    d.list("leave_times_s", leave.clone(), "s")
        .input("walk_s", walk, "s")
        .input("answer_s", answer, "s");
    let mut free_at: Option<f64> = None;
    for (i, visit) in v.iter().enumerate() {
        let arrive = format!("({} + {})", q(visit.leaves_at, "s"), q(walk, "s"));
        let (formula, sub) = match free_at {
            None => ("0 (the professor is free)", "0 s".to_string()),
            Some(end) => (
                "max(end of the previous answer − (leave + walk), 0)",
                format!("max({} − {arrive}, 0 s)", q(end, "s")),
            ),
        };
        d.num(format!("waits_s[{}]", i + 1), formula, sub, visit.wait, "s");
        d.num(
            format!("totals_s[{}]", i + 1),
            "walk + wait + answer",
            format!(
                "{} + {} + {}",
                q(walk, "s"),
                q(visit.wait, "s"),
                q(answer, "s")
            ),
            visit.total,
            "s",
        );
        free_at = Some(visit.leaves_at + visit.total);
    }
    Ok(d)
}

/// Which binning strategy a machine should pick (thought question 3).
#[derive(Debug, Args)]
pub struct BinningArgs {
    /// Items to place.
    #[arg(long, value_parser = args::number)]
    pub items: f64,
    /// Wall time per insert under one global lock, e.g. 600ns
    /// [default: the profile's t_crit_s].
    #[arg(long, value_parser = args::time)]
    pub global_lock_op: Option<Time>,
    /// Wall time per insert with a lock per bucket, e.g. 290ns.
    #[arg(long, value_parser = args::time)]
    pub bucket_lock_op: Time,
    /// Streaming bandwidth for the sort [default: the profile's stream_triad_Bps].
    #[arg(long, value_parser = args::bandwidth)]
    pub bandwidth: Option<f64>,
    /// Extra bytes the counting sort moves per item.
    #[arg(long, default_value = "20", value_parser = args::bytes)]
    pub sort_bytes: f64,
    /// Sort work per item (wall time): the sort takes the longer of its
    /// traffic time and this, max(n·bytes/B, n·t_sort).
    #[arg(long, default_value = "0s", value_parser = args::time)]
    pub sort_op: Time,
}

pub fn binning(a: &BinningArgs, f: &Figures) -> anyhow::Result<Derivation> {
    let mut d = Derivation::new(
        "binning",
        "binning strategies under contention (lecture §2.9, §3.5, §4.5, thought question 3)",
    );
    let bandwidth = f.value(&mut d, a.bandwidth, "bandwidth", "stream_triad_Bps", "B/s")?;
    let inp = BinningInputs {
        items: a.items,
        global_lock_op_s: f.time(&mut d, a.global_lock_op, "global-lock-op", "t_crit_s", None)?,
        bucket_lock_op_s: a
            .bucket_lock_op
            .seconds("bucket-lock-op", f.clock(&mut d, a.bucket_lock_op, None))?,
        sort_bytes_per_item: a.sort_bytes,
        bandwidth_Bps: bandwidth,
        sort_op_s: a
            .sort_op
            .seconds("sort-op", f.clock(&mut d, a.sort_op, None))?,
    };
    let c = costs(&inp)?;
    let n = plain(a.items);
    d.input("items", a.items, "")
        .input("global_lock_op_s", inp.global_lock_op_s, "s")
        .input("bucket_lock_op_s", inp.bucket_lock_op_s, "s")
        .input("bandwidth_Bps", bandwidth, "B/s")
        .input("sort_bytes", a.sort_bytes, "B")
        .input("sort_op_s", inp.sort_op_s, "s");
    d.num(
        "global_lock_s",
        "n·t_global",
        format!("{n}·{}", q(inp.global_lock_op_s, "s")),
        c.global_lock_s,
        "s",
    );
    d.num(
        "bucket_locks_s",
        "n·t_bucket",
        format!("{n}·{}", q(inp.bucket_lock_op_s, "s")),
        c.bucket_locks_s,
        "s",
    );
    d.num(
        "data_parallel_s",
        "max(n·bytes/B, n·t_sort)",
        format!(
            "max({n}·{} / {}, {n}·{})",
            q(a.sort_bytes, "B"),
            q(bandwidth, "B/s"),
            q(inp.sort_op_s, "s")
        ),
        c.data_parallel_s,
        "s",
    );
    let choice = match c.choice {
        Strategy::GlobalLock => "global-lock",
        Strategy::BucketLocks => "bucket-locks",
        Strategy::DataParallel => "data-parallel",
    };
    d.verdict(
        "choice",
        "the cheapest of global-lock, bucket-locks, data-parallel",
        format!(
            "min({}, {}, {})",
            q(c.global_lock_s, "s"),
            q(c.bucket_locks_s, "s"),
            q(c.data_parallel_s, "s")
        ),
        choice,
    );
    Ok(d)
}
