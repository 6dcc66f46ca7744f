//! `loazero._loazero`: the Python extension module of the `loazero` wheel (PyO3, abi3).
//!
//! * [`game`]: [`game::PyGame`] (`loazero.Game`: a variant under rules, its action space and
//!   input layout, the board's symmetries applied to planes and policies) and
//!   [`game::PyState`] (`loazero.State`: legal moves and actions, apply and undo, result,
//!   position text, SGF, the network's input planes).
//! * [`players`]: [`players::PyPlayer`] (`loazero.Player`: a torch-free player spec that
//!   searches a state with the GIL released) and its [`players::PySearchResult`].
//!
//! Everything here is a thin layer over the torch-free crates: the rules are `loa`'s, the
//! planes and action indices `selfplay::encoding` and `selfplay::policy` (the trainer's own
//! encoder), the players `eval::PlayerFactory`'s. Bad input raises `loazero.LoazeroError`
//! (a `ValueError`) with the message the command line gives; nothing here panics on input.

pub mod game;
pub mod players;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    _loazero,
    LoazeroError,
    PyValueError,
    "Bad input to loazero (a position text, a move, a spec, a file): the message names what and where."
);

/// An error of the torch-free crates as a Python `LoazeroError` with the command line's
/// message (the whole cause chain, as `loazero` prints it after `error: `).
pub(crate) fn py_err(e: impl std::fmt::Display) -> PyErr {
    LoazeroError::new_err(e.to_string())
}

/// An `anyhow` error (with its causes, as the command line prints it) as a `LoazeroError`.
pub(crate) fn py_anyhow(e: anyhow::Error) -> PyErr {
    LoazeroError::new_err(format!("{e:#}"))
}

/// The module: its classes, the exception and the variant names.
#[pymodule]
fn _loazero(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("LoazeroError", m.py().get_type::<LoazeroError>())?;
    m.add_class::<game::PyGame>()?;
    m.add_class::<game::PyState>()?;
    m.add_class::<players::PyPlayer>()?;
    m.add_class::<players::PySearchResult>()?;
    m.add_function(wrap_pyfunction!(game::variants, m)?)?;
    m.add_function(wrap_pyfunction!(game::state_from_sgf, m)?)?;
    m.add_function(wrap_pyfunction!(players::bench_states, m)?)?;
    m.add("ENCODING_VERSION", selfplay::encoding::ENCODING_VERSION)?;
    Ok(())
}
