//! The fit of one's own runs against synthetic runs made here from known
//! forms and noise (its own generator, independent of the project's).

use predict::scaling::fit::{fit_runs, FitOptions, Run};
use predict::scaling::terms::{Domain, Term};

/// xorshift64* and Box–Muller: the noise of the synthetic runs.
struct Noise(u64);

impl Noise {
    /// A state from the seed through a 64-bit mixer (Stafford's variant
    /// 13), so that neighbouring seeds start far apart, then warmed up.
    fn seeded(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        let mut n = Noise((z ^ (z >> 31)) | 1);
        for _ in 0..16 {
            n.uniform();
        }
        n
    }

    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// A known form: T1, f, c and g(P).
#[derive(Clone, Copy)]
pub struct Form {
    pub term: Term,
    pub t1: f64,
    pub f: f64,
    pub c: f64,
}

pub const DOMAIN: Domain = Domain { n: 1e6, dims: 2.0 };

fn g(term: Term, p: f64) -> f64 {
    if p <= 1.0 {
        return 0.0;
    }
    match term {
        Term::None => 0.0,
        Term::Const => 1.0,
        Term::Log2P => p.log2(),
        Term::SqrtP => p.sqrt(),
        Term::P => p,
        Term::PLogP => p * p.log2(),
        Term::Surface => (DOMAIN.n / p).sqrt(),
    }
}

/// Runs at P = 1, 2, …, 64, `reps` each, with relative Gaussian noise `sd`.
pub fn runs(form: Form, seed: u64, reps: usize, sd: f64) -> Vec<Run> {
    let mut noise = Noise::seeded(seed);
    let mut out = Vec::new();
    for k in 0..=P_MAX_LOG2 {
        let p = f64::from(1u32 << k);
        for _ in 0..reps {
            let t = form.t1 * (form.f + (1.0 - form.f) / p) + form.c * g(form.term, p);
            out.push(Run {
                p,
                time_s: t * (1.0 + sd * noise.normal()),
                comm_s: None,
                line: out.len() as u64 + 2,
            });
        }
    }
    out
}

pub const FORMS: [Form; 4] = [
    Form {
        term: Term::Const,
        t1: 100.0,
        f: 0.01,
        c: 3.0,
    },
    Form {
        term: Term::Log2P,
        t1: 100.0,
        f: 0.01,
        c: 0.5,
    },
    Form {
        term: Term::P,
        t1: 100.0,
        f: 0.01,
        c: 0.05,
    },
    Form {
        term: Term::Surface,
        t1: 100.0,
        f: 0.02,
        c: 0.002,
    },
];

/// Runs per P, largest P (2^P_MAX_LOG2) and relative noise of the check:
/// three runs at each of P = 1, 2, 4, …, 128 with 1% noise.
pub const REPS: usize = 3;
pub const P_MAX_LOG2: u32 = 7;
pub const NOISE: f64 = 0.01;

/// Fits the synthetic runs of `form` with `seed`.
pub fn fit(form: Form, seed: u64) -> predict::scaling::fit::RunsFit {
    fit_runs(
        runs(form, seed, REPS, NOISE),
        "synthetic",
        FitOptions {
            domain: Some(DOMAIN),
            seed: 1,
        },
    )
    .unwrap()
}

/// Seeds per form, and how many of them must choose the true term with
/// all three true parameters inside their 95% intervals. The constant term
/// is the hardest to tell from the surface term: over 200 seeds 175 (88%)
/// succeeded, the other forms 185–188 (93–94%); of these 40 seeds 36 to 39.
const SEEDS: u64 = 40;
const GOOD_SEEDS: usize = 34;

/// For each known form: in at least 34 of 40 seeds the chosen term is the
/// true one and all three true parameters lie inside their 95% intervals;
/// in every seed f and c stay in their physical ranges, intervals included.
#[test]
fn the_true_term_is_chosen_and_the_truth_lies_inside_the_intervals() {
    let mut failures = Vec::new();
    for form in FORMS {
        let mut good = 0;
        for seed in 0..SEEDS {
            let f = fit(form, seed);
            let [t1, fr, c] = f.values();
            assert!((0.0..=1.0).contains(&fr) && c >= 0.0 && t1 > 0.0);
            for e in &f.fit.params {
                assert!(e.lo <= e.point && e.point <= e.hi, "{e:?}");
            }
            assert!(f.fit.params[1].lo >= 0.0 && f.fit.params[1].hi <= 1.0);
            assert!(f.fit.params[2].lo >= 0.0);
            let inside = f
                .fit
                .params
                .iter()
                .zip([form.t1, form.f, form.c])
                .all(|(e, v)| e.lo <= v && v <= e.hi);
            if f.term == form.term && inside {
                good += 1;
            } else {
                eprintln!(
                    "{} seed {seed}: chose {}, {:?}",
                    form.term.name(),
                    f.term.name(),
                    f.fit.params
                );
            }
        }
        if good < GOOD_SEEDS {
            failures.push(format!("{}: {good} of {SEEDS}", form.term.name()));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

/// Near a bound the intervals stop at it: no serial part and no
/// communication at all.
#[test]
fn intervals_stop_at_the_bounds() {
    let form = Form {
        term: Term::Log2P,
        t1: 50.0,
        f: 0.0,
        c: 0.0,
    };
    for seed in 0..10 {
        let f = fit(form, seed);
        let [_, fr, c] = f.values();
        assert!(fr >= 0.0 && c >= 0.0);
        assert!(f.fit.params[1].lo >= 0.0 && f.fit.params[2].lo >= 0.0);
        assert!(f.fit.params[1].lo <= 0.0 + 1e-12 || fr > 0.0);
    }
}

/// One failed run far below the others (a fifteenth of its time) is
/// named, and does not flatten the fit towards itself: with weights 1/T²
/// of the measured times it weighed 225 times as much as its neighbours,
/// and the fit of the example runs plus one such run was T1 = 1.83 s, flat
/// at every P, against the 120 s the runs were made from. It still pulls
/// (a least-squares fit has no defence against a gross error; here T1
/// reads 90 s for 100 s), which is why the note asks to check it.
#[test]
fn a_failed_run_is_named_and_does_not_capture_the_fit() {
    let form = FORMS[1];
    let mut runs = runs(form, 3, REPS, NOISE);
    let bad = runs.iter().position(|r| r.p == 8.0).unwrap();
    runs[bad].time_s /= 15.0;
    let line = runs[bad].line;
    let f = fit_runs(
        runs,
        "synthetic",
        FitOptions {
            domain: None,
            seed: 1,
        },
    )
    .unwrap();
    let [t1, ..] = f.values();
    assert!((t1 / form.t1 - 1.0).abs() < 0.15, "T1 = {t1}");
    assert!(f.fit.r_squared > 0.8, "R² = {}", f.fit.r_squared);
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains(&format!("P = 8 (line {line}:"))),
        "{:?}",
        f.notes
    );
    assert!(
        !f.notes.iter().any(|n| n.contains("P = 4 (")),
        "{:?}",
        f.notes
    );
}

/// Runs that every candidate fits exactly (T1/P, nothing else) tie on
/// AICc instead of being ranked by rounding: the simplest term wins.
#[test]
fn exact_runs_choose_the_simplest_term() {
    let runs: Vec<Run> = (0..=6)
        .flat_map(|k| {
            let p = f64::from(1u32 << k);
            [0, 1].map(|rep| Run {
                p,
                time_s: 100.0 / p,
                comm_s: None,
                line: 2 + 2 * k as u64 + rep,
            })
        })
        .collect();
    let f = fit_runs(
        runs,
        "exact",
        FitOptions {
            domain: None,
            seed: 1,
        },
    )
    .unwrap();
    assert_eq!(f.term, Term::None, "{:?}", f.ranking);
    let [t1, fr, c] = f.values();
    assert!((t1 - 100.0).abs() < 1e-9 && fr.abs() < 1e-12 && c == 0.0);
}
