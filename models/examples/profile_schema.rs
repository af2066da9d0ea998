//! Prints the JSON schema of the machine profile, generated from the
//! types: `cargo run -p models --example profile_schema > data/profile.schema.json`.
//! With a profile path as argument, prints that profile as the types
//! write it instead (to see what a round trip through them keeps).

fn main() {
    match std::env::args().nth(1) {
        None => println!(
            "{}",
            serde_json::to_string_pretty(&models::profile::schema()).expect("a schema serializes")
        ),
        Some(path) => {
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: cannot read {path}: {e}");
                    std::process::exit(2);
                }
            };
            match models::profile::Profile::from_json(&text) {
                Ok(p) => println!("{}", p.to_json()),
                Err(e) => {
                    eprintln!("error: {path}: {e}");
                    std::process::exit(2);
                }
            }
        }
    }
}
