//! `kibitz connect4-book`: derives the Connect-4 opening book's shallow layer (positions of at
//! most 8 discs) from its 12-disc layer, to write it or to check the copy built into the binary.
//!
//! The derivation itself is the book's ([`crate::games::connect4::book::derive`]); this file is
//! only the command around it: its flags, the timing line on stderr and the comparison.

use anyhow::Context;

use crate::games::connect4::book::{SHALLOW_PLIES, derive};

#[derive(clap::Args)]
pub struct Connect4BookArgs {
    /// Where to write the layer (the shipped one is
    /// `src/games/connect4/book/book_8ply_distances.dat`).
    #[arg(long, required_unless_present = "check")]
    pub out: Option<std::path::PathBuf>,
    /// Positions with at most this many discs.
    #[arg(long, default_value_t = SHALLOW_PLIES)]
    pub max_discs: u32,
    /// Derive the layer again and check the binary's own copy is identical.
    #[arg(long)]
    pub check: bool,
}

/// Derives the layer, then writes it to `--out` and/or checks it against the shipped one.
pub fn run(args: &Connect4BookArgs) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let bytes = derive::derive_shallow_layer(args.max_discs)?;
    eprintln!(
        "derived {} positions of at most {} discs in {:.1} s",
        bytes.len() / 5,
        args.max_discs,
        started.elapsed().as_secs_f64()
    );
    if let Some(out) = &args.out {
        std::fs::write(out, &bytes).with_context(|| format!("writing {}", out.display()))?;
    }
    if args.check {
        anyhow::ensure!(
            derive::matches_shipped_layer(&bytes),
            "the derived layer differs from the one built into this binary"
        );
        eprintln!("identical to the layer built into this binary");
    }
    Ok(())
}
