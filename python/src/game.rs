//! `loazero.Game` and `loazero.State`: the rules of every variant under every rule option,
//! as Python objects.
//!
//! Actions: a move's action index is its policy index (`selfplay::policy`, the network's
//! output layout); a pass, which has no policy index, is the last action
//! ([`PyGame::pass_action`] = the policy size). So `Game.num_actions` is the policy size
//! plus one, and the action mask of a state lines up with the network's policy output
//! (plus the pass entry).

use crate::{py_err, LoazeroError};
use loa::sgf::SgfGame;
use loa::{Game, Move, Outcome, Position, Rules, Variant};
use numpy::{PyArray1, PyArray3, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use selfplay::encoding::{self, PlaneSet};
use selfplay::policy::{self, PolicyIndex};
use std::sync::OnceLock;

/// The plane set named `name` (`board`, `loa`, `loa-nearest`).
pub fn plane_set_of(name: &str) -> PyResult<PlaneSet> {
    PlaneSet::ALL
        .into_iter()
        .find(|s| s.name() == name.trim())
        .ok_or_else(|| {
            LoazeroError::new_err(format!(
                "unknown plane set '{name}' (expected one of: {})",
                PlaneSet::ALL.map(|s| s.name()).join(", ")
            ))
        })
}

/// The names of every variant, in loazero's order.
#[pyfunction]
pub fn variants() -> Vec<&'static str> {
    Variant::ALL.map(|v| v.name()).to_vec()
}

/// The state at the end of an SGF file's main line (its variant and rules are the file's;
/// its start position and every move checked). Errors name the property or move and its
/// line and column.
#[pyfunction]
pub fn state_from_sgf(text: &str) -> PyResult<PyState> {
    let sgf = SgfGame::parse(text).map_err(py_err)?;
    Ok(PyState::new(sgf.game))
}

/// A variant of Lines of Action under a set of rules: the factory of states, the action
/// space and the input layout of the network.
#[pyclass(name = "Game", module = "loazero", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyGame {
    variant: Variant,
    rules: Rules,
}

impl PyGame {
    /// The policy size of the variant (the pass action's index).
    fn policy_len(&self) -> usize {
        policy::policy_size(self.variant)
    }
}

#[pymethods]
impl PyGame {
    /// `Game(variant="standard", rules="classic")`: a variant by name (`loazero.variants()`)
    /// and rules as `loazero rules` reads them (`classic`, `icga`, `classic,ply-limit=300`,
    /// `simultaneous=draw,no-move=loss`, …).
    #[new]
    #[pyo3(signature = (variant = "standard", rules = "classic"))]
    fn new(variant: &str, rules: &str) -> PyResult<PyGame> {
        Ok(PyGame {
            variant: variant.parse().map_err(py_err)?,
            rules: Rules::parse(rules).map_err(py_err)?,
        })
    }

    /// The variant's name.
    #[getter]
    fn variant(&self) -> &'static str {
        self.variant.name()
    }

    /// The rules, in the text form `Game(rules=…)` reads back.
    #[getter]
    fn rules(&self) -> String {
        self.rules.to_string()
    }

    /// The rules' ply limit (a game reaching it is drawn), `None` for none.
    #[getter]
    fn ply_limit(&self) -> Option<u32> {
        self.rules.ply_limit
    }

    /// Number of actions: the policy size plus one (the pass).
    #[getter]
    fn num_actions(&self) -> usize {
        self.policy_len() + 1
    }

    /// The action of a pass (the last one).
    #[getter]
    fn pass_action(&self) -> usize {
        self.policy_len()
    }

    /// Size of the network's policy output (every action but the pass).
    #[getter]
    fn policy_size(&self) -> usize {
        self.policy_len()
    }

    /// Side of the grid every plane and policy plane covers (9 for the hexagonal board).
    #[getter]
    fn board_size(&self) -> usize {
        self.variant.geometry().size as usize
    }

    /// Number of board symmetries (8 on square boards, 12 on the hexagonal one).
    #[getter]
    fn num_symmetries(&self) -> usize {
        self.variant.geometry().num_symmetries as usize
    }

    /// The start state.
    fn new_initial_state(&self) -> PyState {
        PyState::new(Game::new(self.variant, self.rules))
    }

    /// The state of position text `text` (as `State.text()` writes it, e.g.
    /// `1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b`); its repetition history starts there.
    fn state_from_text(&self, text: &str) -> PyResult<PyState> {
        let pos = Position::from_text(text, self.variant).map_err(py_err)?;
        Ok(PyState::new(Game::from_position(pos, self.rules)))
    }

    /// The names of the input planes with `plane_set`, in plane order.
    #[pyo3(signature = (plane_set = "board"))]
    fn plane_names(&self, plane_set: &str) -> PyResult<Vec<&'static str>> {
        Ok(encoding::input_layout(self.variant, plane_set_of(plane_set)?).planes)
    }

    /// The factor each stored `u8` plane is multiplied by before entering the network.
    #[pyo3(signature = (plane_set = "board"))]
    fn plane_scales(&self, plane_set: &str) -> PyResult<Vec<f32>> {
        Ok(encoding::plane_scales(
            self.variant,
            plane_set_of(plane_set)?,
        ))
    }

    /// The shape of one position's planes: `(planes, size, size)`.
    #[pyo3(signature = (plane_set = "board"))]
    fn planes_shape(&self, plane_set: &str) -> PyResult<(usize, usize, usize)> {
        let n = self.variant.geometry().size as usize;
        Ok((
            encoding::num_planes(self.variant, plane_set_of(plane_set)?),
            n,
            n,
        ))
    }

    /// Planes (`uint8`, any shape holding one position's planes) under board symmetry
    /// `symmetry`: the planes of the transformed position, shape `(planes, size, size)`.
    #[pyo3(signature = (planes, symmetry, plane_set = "board"))]
    fn transform_planes<'py>(
        &self,
        py: Python<'py>,
        planes: PyReadonlyArrayDyn<'py, u8>,
        symmetry: usize,
        plane_set: &str,
    ) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let set = plane_set_of(plane_set)?;
        let data = planes.to_vec().map_err(py_err)?;
        let out = encoding::transform_planes(self.variant, set, &data, symmetry)
            .map_err(LoazeroError::new_err)?;
        let (p, n, _) = self.planes_shape(plane_set)?;
        PyArray1::from_vec(py, out).reshape([p, n, n])
    }

    /// A policy (`float32`, one value per policy index, or per action with the pass last)
    /// under board symmetry `symmetry`: each value moves to its move's image (the pass
    /// stays last).
    fn transform_policy<'py>(
        &self,
        py: Python<'py>,
        policy: PyReadonlyArrayDyn<'py, f32>,
        symmetry: usize,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let mut data = policy.to_vec().map_err(py_err)?;
        let size = self.policy_len();
        let pass = (data.len() == size + 1).then(|| data.pop()).flatten();
        if policy.ndim() != 1 {
            return Err(LoazeroError::new_err(format!(
                "policy of {} dimensions: expected one",
                policy.ndim()
            )));
        }
        let mut out = policy::transform_policy(self.variant, &data, symmetry)
            .map_err(|e| LoazeroError::new_err(format!("{e} (or {} with the pass)", size + 1)))?;
        out.extend(pass);
        Ok(PyArray1::from_vec(py, out))
    }

    fn __repr__(&self) -> String {
        format!(
            "loazero.Game(variant='{}', rules='{}')",
            self.variant.name(),
            self.rules
        )
    }

    /// Pickling: the variant and rules.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (&'static str, String))> {
        Ok((
            py.get_type::<PyGame>().into_any(),
            (self.variant.name(), self.rules.to_string()),
        ))
    }
}

/// A game in progress: the position, the moves played and the repetition history.
#[pyclass(name = "State", module = "loazero")]
#[derive(Clone)]
pub struct PyState {
    game: Game,
    /// The legal moves with their actions, ascending by action: computed once per
    /// position (a fresh cell after every change of `game`).
    legal: OnceLock<Vec<(usize, Move)>>,
}

impl PyState {
    /// The state of `game`.
    pub fn new(game: Game) -> PyState {
        PyState {
            game,
            legal: OnceLock::new(),
        }
    }

    /// Replaces the game (and forgets the legal moves of the old one).
    fn set_game(&mut self, game: Game) {
        *self = PyState::new(game);
    }

    /// The legal moves with their actions, ascending by action (empty once over).
    fn legal(&self) -> &[(usize, Move)] {
        self.legal.get_or_init(|| {
            let mut legal: Vec<(usize, Move)> = self
                .game
                .legal_moves()
                .iter()
                .map(|&m| (self.action_of(m), m))
                .collect();
            legal.sort_unstable_by_key(|&(a, _)| a);
            legal
        })
    }

    /// The move of action `action`, if it is legal here.
    fn move_of(&self, action: usize) -> PyResult<Move> {
        let legal = self.legal();
        match legal.binary_search_by_key(&action, |&(a, _)| a) {
            Ok(i) => Ok(legal[i].1),
            Err(_) => {
                let pos = self.game.position();
                Err(LoazeroError::new_err(format!(
                    "action {action} is not legal in position {}{}",
                    pos.to_text(),
                    if self.game.is_over() {
                        " (the game is over)"
                    } else {
                        ""
                    }
                )))
            }
        }
    }

    /// The action of a move of this position.
    fn action_of(&self, mv: Move) -> usize {
        let pos = self.game.position();
        pos.policy_index(mv)
            .unwrap_or_else(|| policy::policy_size(pos.variant()))
    }

    /// The legal actions, ascending.
    fn actions(&self) -> Vec<usize> {
        self.legal().iter().map(|&(a, _)| a).collect()
    }

    /// The game behind this state.
    pub fn game(&self) -> &Game {
        &self.game
    }
}

#[pymethods]
impl PyState {
    /// The game (variant and rules) of this state.
    #[getter]
    fn game_info(&self) -> PyGame {
        PyGame {
            variant: self.game.position().variant(),
            rules: *self.game.rules(),
        }
    }

    /// The legal moves as text (`b1-d3`, `b1xd3`, `pass`, `@e5`, `~e5`); empty once over.
    fn legal_moves(&self) -> Vec<String> {
        self.game
            .legal_moves()
            .iter()
            .map(|m| m.to_string())
            .collect()
    }

    /// The legal actions, ascending (see the module docs); empty once over.
    fn legal_actions(&self) -> Vec<usize> {
        self.actions()
    }

    /// A `bool` array of `Game.num_actions` entries, true at the legal actions.
    fn action_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        let size = policy::policy_size(self.game.position().variant());
        let mut mask = vec![false; size + 1];
        for a in self.actions() {
            mask[a] = true;
        }
        PyArray1::from_vec(py, mask)
    }

    /// The move text of a legal action.
    fn action_to_move(&self, action: usize) -> PyResult<String> {
        Ok(self.move_of(action)?.to_string())
    }

    /// The action of a legal move given as text.
    fn move_to_action(&self, text: &str) -> PyResult<usize> {
        let mv = self
            .game
            .position()
            .parse_move(text, self.game.rules())
            .map_err(py_err)?;
        Ok(self.action_of(mv))
    }

    /// Plays a legal move given as text.
    fn apply(&mut self, text: &str) -> PyResult<()> {
        self.game.play_text(text).map_err(py_err)?;
        self.legal = OnceLock::new();
        Ok(())
    }

    /// Plays a legal action.
    fn apply_action(&mut self, action: usize) -> PyResult<()> {
        let mv = self.move_of(action)?;
        self.game.play(mv).map_err(py_err)?;
        self.legal = OnceLock::new();
        Ok(())
    }

    /// Plays uniformly random legal moves (seeded: `loa::testing::XorShift`) until the game
    /// is over, with the GIL released, and returns the outcome (`black`, `white`, `draw`).
    /// One call per playout: the loop of `legal_actions` and `apply_action` without
    /// Python's per-move calls. Under rules without a ply limit a game still ends (by
    /// connection or repetition), only later.
    #[pyo3(signature = (seed = 0))]
    fn random_playout(&mut self, py: Python<'_>, seed: u64) -> PyResult<&'static str> {
        let mut game = self.game.clone();
        let outcome = py.detach(move || {
            let mut rng = loa::testing::XorShift::new(seed);
            while game.outcome().is_none() {
                let moves = game.legal_moves();
                game.play(moves[rng.below(moves.len())])?;
            }
            let outcome = game.outcome().map_or("draw", Outcome::name);
            Ok::<_, loa::Error>((game, outcome))
        });
        let (game, outcome) = outcome.map_err(py_err)?;
        self.set_game(game);
        Ok(outcome)
    }

    /// Takes back the last move (not beyond the state's start: `new_initial_state`, a
    /// position text or an SGF start). Replays the game from its start, so it costs the
    /// moves played.
    fn undo(&mut self) -> PyResult<String> {
        let moves = self.game.moves();
        let Some((&last, earlier)) = moves.split_last() else {
            return Err(LoazeroError::new_err(
                "no move to undo: the state is at its start",
            ));
        };
        let mut game = Game::from_position(*self.game.start(), *self.game.rules());
        for &mv in earlier {
            game.play(mv).map_err(py_err)?;
        }
        self.set_game(game);
        Ok(last.to_string())
    }

    /// The moves played from the state's start, as text.
    fn history(&self) -> Vec<String> {
        self.game.moves().iter().map(|m| m.to_string()).collect()
    }

    /// Whether the game is over.
    fn is_terminal(&self) -> bool {
        self.game.is_over()
    }

    /// `black`, `white`, `draw`, or `None` while the game goes on.
    fn outcome(&self) -> Option<&'static str> {
        self.game.outcome().map(Outcome::name)
    }

    /// The winner (`black` or `white`; in ambiloa the team), or `None` (a draw, or not over).
    fn winner(&self) -> Option<&'static str> {
        self.game
            .outcome()
            .and_then(Outcome::winner)
            .map(|c| c.name())
    }

    /// The side to move: `black` or `white` (in ambiloa the team of the player to move).
    fn to_move(&self) -> &'static str {
        self.game.position().to_move().name()
    }

    /// The side to move as 0 (black) or 1 (white).
    fn current_player(&self) -> usize {
        self.game.position().to_move().index()
    }

    /// `[black, white]` results of a finished game (+1 win, −1 loss, 0 draw); zeros
    /// while it goes on.
    fn returns(&self) -> [f64; 2] {
        match self.game.outcome() {
            Some(o) => loa::Color::ALL.map(|c| o.score_for(c) as f64),
            None => [0.0, 0.0],
        }
    }

    /// Plies played from the variant's start (the position's ply number).
    fn ply(&self) -> u32 {
        self.game.position().ply()
    }

    /// The position text (`Game.state_from_text` reads it back).
    fn text(&self) -> String {
        self.game.position().to_text()
    }

    /// The position text of the state's start (`Game.state_from_text` reads it back;
    /// `start_text()` and `history()` replay the state, repetition history included).
    fn start_text(&self) -> String {
        self.game.start().to_text()
    }

    /// The game as an SGF file (start position, rules, moves, result);
    /// `loazero.state_from_sgf` reads it back.
    fn sgf(&self) -> String {
        SgfGame::new(self.game.clone()).format()
    }

    /// A human-readable board diagram.
    fn diagram(&self) -> String {
        self.game.position().to_diagram()
    }

    /// The position's 64-bit Zobrist hash (pieces, side to move, the variant's state).
    fn hash(&self) -> u64 {
        self.game.position().hash()
    }

    /// An independent copy.
    #[pyo3(name = "clone")]
    fn copy(&self) -> PyState {
        self.clone()
    }

    /// The network's input planes of this position (`uint8`, shape `(planes, size,
    /// size)`, from the side to move's view; the trainer's encoder), under board symmetry
    /// `symmetry` (0: none). Multiply by `Game.plane_scales` for what the network sees
    /// (the exported models do it themselves).
    #[pyo3(signature = (plane_set = "board", symmetry = 0))]
    fn planes<'py>(
        &self,
        py: Python<'py>,
        plane_set: &str,
        symmetry: usize,
    ) -> PyResult<Bound<'py, PyArray3<u8>>> {
        let set = plane_set_of(plane_set)?;
        let pos = self.game.position();
        let g = pos.geometry();
        if symmetry >= g.num_symmetries as usize {
            return Err(LoazeroError::new_err(format!(
                "symmetry {symmetry} out of range: {} has {}",
                pos.variant(),
                g.num_symmetries
            )));
        }
        let planes = encoding::encode(&pos.transformed(symmetry), set);
        let n = g.size as usize;
        PyArray1::from_vec(py, planes).reshape([encoding::num_planes(pos.variant(), set), n, n])
    }

    fn __str__(&self) -> String {
        self.game.position().to_diagram()
    }

    fn __repr__(&self) -> String {
        format!(
            "loazero.State('{}', variant='{}')",
            self.game.position().to_text(),
            self.game.position().variant()
        )
    }

    fn __hash__(&self) -> u64 {
        self.game.position().hash()
    }

    /// Equal: the same position (pieces, side to move, variant state) under the same rules.
    fn __eq__(&self, other: &PyState) -> bool {
        self.game.position() == other.game.position() && self.game.rules() == other.game.rules()
    }

    /// Pickling: the state as its SGF file (variant, rules, start position, moves: the
    /// repetition history too), read back by `loazero.state_from_sgf`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let module = PyModule::import(py, "loazero._loazero")?;
        Ok((module.getattr("state_from_sgf")?, (self.sgf(),)))
    }

    fn __copy__(&self) -> PyState {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyState {
        self.clone()
    }
}
