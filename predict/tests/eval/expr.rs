//! A small evaluator for the lines of work `predict eval` prints: numbers
//! with SI-prefixed units (read into SI base units), + − · / × ², √,
//! ⌊ ⌋, ⌈ ⌉, max(…), min(…), log_k x and one comparison (< ≤ > ≥), which
//! gives 1 when it holds and 0 when it does not. Anything else (a symbol
//! left unsubstituted, a stray word) is an error.

pub fn eval(s: &str) -> Result<f64, String> {
    let mut p = Parser {
        c: s.chars().collect(),
        i: 0,
    };
    let v = p.compare()?;
    p.ws();
    if p.i < p.c.len() {
        return Err(format!("unexpected '{}' at {} in «{s}»", p.c[p.i], p.i));
    }
    Ok(v)
}

struct Parser {
    c: Vec<char>,
    i: usize,
}

const BASES: [(&str, f64); 10] = [
    ("FLOP/s", 1.0),
    ("flop/B", 1.0),
    ("msg/s", 1.0),
    ("op/s", 1.0),
    ("B/s", 1.0),
    ("Hz", 1.0),
    ("min", 60.0),
    ("B", 1.0),
    ("s", 1.0),
    ("h", 3600.0),
];

const PREFIXES: [(&str, f64); 13] = [
    ("Ki", 1024.0),
    ("Mi", 1048576.0),
    ("Gi", 1073741824.0),
    ("k", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("T", 1e12),
    ("P", 1e15),
    ("m", 1e-3),
    ("µ", 1e-6),
    ("n", 1e-9),
    ("p", 1e-12),
    ("", 1.0),
];

impl Parser {
    fn ws(&mut self) {
        while self.i < self.c.len() && self.c[self.i] == ' ' {
            self.i += 1;
        }
    }

    fn eat(&mut self, s: &str) -> bool {
        self.ws();
        let n = s.chars().count();
        if self.c[self.i..].iter().take(n).copied().eq(s.chars()) {
            self.i += n;
            true
        } else {
            false
        }
    }

    fn compare(&mut self) -> Result<f64, String> {
        let a = self.sum()?;
        for (op, f) in [
            ("≤", (|x: f64, y: f64| x <= y) as fn(f64, f64) -> bool),
            ("≥", |x, y| x >= y),
            ("<", |x, y| x < y),
            (">", |x, y| x > y),
        ] {
            if self.eat(op) {
                let b = self.sum()?;
                return Ok(if f(a, b) { 1.0 } else { 0.0 });
            }
        }
        Ok(a)
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        loop {
            if self.eat("+") {
                v += self.product()?;
            } else if self.eat("−") || self.eat("-") {
                v -= self.product()?;
            } else {
                return Ok(v);
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.unary()?;
        loop {
            if self.eat("·") || self.eat("×") || self.eat("*") {
                v *= self.unary()?;
            } else if self.eat("/") {
                v /= self.unary()?;
            } else {
                return Ok(v);
            }
        }
    }

    fn unary(&mut self) -> Result<f64, String> {
        if self.eat("−") || self.eat("-") {
            return Ok(-self.unary()?);
        }
        if self.eat("√") {
            return Ok(self.unary()?.sqrt());
        }
        let v = self.primary()?;
        Ok(if self.eat("²") { v * v } else { v })
    }

    fn list(&mut self) -> Result<Vec<f64>, String> {
        let mut items = vec![self.compare()?];
        while self.eat(",") {
            items.push(self.compare()?);
        }
        if !self.eat(")") {
            return Err(format!("')' expected at {}", self.i));
        }
        Ok(items)
    }

    fn primary(&mut self) -> Result<f64, String> {
        let close = |p: &mut Self, c: &str, v: f64| {
            if p.eat(c) {
                Ok(v)
            } else {
                Err(format!("'{c}' expected at {}", p.i))
            }
        };
        if self.eat("(") {
            let v = self.compare()?;
            return close(self, ")", v);
        }
        if self.eat("⌊") {
            let v = self.compare()?.floor();
            return close(self, "⌋", v);
        }
        if self.eat("⌈") {
            let v = self.compare()?.ceil();
            return close(self, "⌉", v);
        }
        if self.eat("max(") {
            return Ok(self.list()?.into_iter().fold(f64::NEG_INFINITY, f64::max));
        }
        if self.eat("min(") {
            return Ok(self.list()?.into_iter().fold(f64::INFINITY, f64::min));
        }
        if self.eat("log_") {
            let base = self.number()?;
            let x = self.unary()?;
            return Ok(x.ln() / base.ln());
        }
        self.number()
    }

    fn number(&mut self) -> Result<f64, String> {
        self.ws();
        let start = self.i;
        let digit = |c: Option<&char>| c.is_some_and(|c| c.is_ascii_digit());
        while self.i < self.c.len() && (self.c[self.i].is_ascii_digit() || self.c[self.i] == '.') {
            self.i += 1;
        }
        if self.i == start {
            return Err(format!(
                "a number expected at {start}: «{}»",
                self.c[start..].iter().collect::<String>()
            ));
        }
        if self.c.get(self.i) == Some(&'e')
            && (digit(self.c.get(self.i + 1))
                || (self.c.get(self.i + 1) == Some(&'-') && digit(self.c.get(self.i + 2))))
        {
            self.i += 2;
            while digit(self.c.get(self.i)) {
                self.i += 1;
            }
        }
        let text: String = self.c[start..self.i].iter().collect();
        let v: f64 = text.parse().map_err(|e| format!("{text}: {e}"))?;
        Ok(v * self.unit())
    }

    /// The factor of a unit right after a number: `/s` attached, or a
    /// space and a prefixed unit that ends the word.
    fn unit(&mut self) -> f64 {
        let rest: String = self.c[self.i..].iter().collect();
        let ends_word = |r: &str| !r.starts_with(|c: char| c.is_alphabetic());
        if let Some(r) = rest.strip_prefix("/s") {
            if ends_word(r) {
                self.i += 2;
                return 1.0;
            }
        }
        let spaced = rest.trim_start_matches(' ');
        let skipped = rest.chars().count() - spaced.chars().count();
        let mut best: Option<(usize, f64)> = None;
        for (p, pf) in PREFIXES {
            for (b, bf) in BASES {
                let u = format!("{p}{b}");
                if let Some(r) = spaced.strip_prefix(&u) {
                    let n = u.chars().count();
                    if ends_word(r) && !matches!(best, Some((m, _)) if m >= n) {
                        best = Some((n, pf * bf));
                    }
                }
            }
        }
        match best {
            Some((n, f)) => {
                self.i += skipped + n;
                f
            }
            None => 1.0,
        }
    }
}

#[test]
fn the_evaluator_reads_the_work() {
    let close = |s: &str, v: f64| {
        let got = eval(s).unwrap();
        assert!(
            (got - v).abs() <= 1e-9 * v.abs().max(1e-30),
            "{s}: {got} vs {v}"
        );
    };
    close("2 µs + 32768 B / 6.4 GB/s", 2e-6 + 32768.0 / 6.4e9);
    close("1·(2 µs + 4 B / 6.4 GB/s)", 2e-6 + 4.0 / 6.4e9);
    close("4096² / 64", 262144.0);
    close("⌈log_2 64⌉", 6.0);
    close("max(0, 1)·min(2, 1)·100 ns", 100e-9);
    close("(1/20 − 1/16) / (1 − 1/16)", (0.05 - 0.0625) / 0.9375);
    close("0.8 / ((1/s) − (0.8/s))", 4.0);
    close("4 s + 1/(1/s)", 5.0);
    close("max(10 min − (0 s + 5 min), 0 s)", 300.0);
    close("4096 · √64", 32768.0);
    close("1.678e7 / 2", 8.39e6);
    close("1 < 38.4", 1.0);
    close("49152 B ≤ 2 MiB", 1.0);
    close("-0.5 + 1", 0.5);
    assert!(eval("ρ = 0.8, μ = 1").is_err());
    assert!(eval("2·512·(2B/4B)").is_err() || eval("2·512·(2B/4B)").unwrap() != 1024.0);
    assert!(eval("compare the times above").is_err());
}
