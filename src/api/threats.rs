//! The `threats` member of a gomoku answer (openapi.yaml's `Threats`): what the move makes and
//! blocks, in a teacher's words, and how a win was proven when a threat search proved it.
//!
//! One function, [`ThreatsJson::new`], renders the labels of any move, so that every move an
//! answer names (the suggested one, the first move of each line) can carry them the same way.

use serde::Serialize;

use crate::engine::{Outcome, Proof, ThreatProof};
use crate::games::gomoku::labels::{MoveLabels, Threat};

/// What a move makes and blocks, and the threat search's proof of a win.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreatsJson {
    /// The mover's threats the move makes, strongest first.
    pub makes: Vec<ThreatJson>,
    /// The opponent's threats the move takes away, strongest first.
    pub blocks: Vec<ThreatJson>,
    /// Under renju, when the move is one of black's forbidden points: why (and no labels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbidden: Option<&'static str>,
    /// When a threat search (VCF or VCT) proved the win: its kind and length.
    pub proof: Option<ThreatProofJson>,
}

/// One labelled threat.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreatJson {
    /// `five`, `open_four`, `double_four`, `four_three`, `four`, `double_three`,
    /// `open_three` or `broken_three`.
    pub shape: &'static str,
    /// `row`, `column`, `diagonal` or `anti_diagonal`; absent for a double threat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<&'static str>,
}

/// How a win was proven by a threat search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreatProofJson {
    /// `VCF` (continuous fours) or `VCT` (fours and threes).
    pub kind: &'static str,
    /// Plies of the proven line, the move itself being ply 1 and the five the last: the
    /// answer's `plies_to_end`.
    pub plies: u32,
}

impl ThreatsJson {
    /// The member for `labels`, with `by` (which threat search, if any) and `proof` (the
    /// answer's) giving its proof: present only for a proven win a threat search found.
    pub fn new(labels: &MoveLabels, by: Option<ThreatProof>, proof: Option<Proof>) -> Self {
        let threat = |t: &Threat| ThreatJson {
            shape: t.shape.name(),
            line: t.line.map(|line| line.name()),
        };
        ThreatsJson {
            makes: labels.makes.iter().map(threat).collect(),
            blocks: labels.blocks.iter().map(threat).collect(),
            forbidden: labels.forbidden.map(|why| why.name()),
            proof: by
                .zip(proof.filter(|p| p.outcome == Outcome::Win))
                .map(|(kind, p)| ThreatProofJson {
                    kind: kind.as_str(),
                    plies: p.plies_to_end,
                }),
        }
    }
}
