//! Zobrist keys for incremental position hashing. Keys are fixed (computed at compile time
//! from a constant seed), so hashes are stable across runs and machines.

const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

/// Per-square piece keys plus the side-to-move key, and the keys of the variants' extra
/// state (vanished cells, partners' pieces, reserves, a pending drop).
pub struct ZobristKeys {
    /// `pieces[colour][square]`.
    pub pieces: [[u64; 64]; 2],
    /// XORed in when White is to move.
    pub white_to_move: u64,
    /// `vanished[square]` (`gemma`).
    pub vanished: [u64; 64],
    /// `partner[square]`: the piece there belongs to a team's second player (`ambiloa`).
    pub partner: [u64; 64],
    /// XORed in when a team's second player is to move (`ambiloa`).
    pub second_seat: u64,
    /// `reserve[colour][count]` (`parachute`).
    pub reserve: [[u64; 8]; 2],
    /// XORed in while the side to move owes the drop of its turn (`parachute`).
    pub drop_pending: u64,
}

const fn make_keys() -> ZobristKeys {
    let mut keys = ZobristKeys {
        pieces: [[0; 64]; 2],
        white_to_move: 0,
        vanished: [0; 64],
        partner: [0; 64],
        second_seat: 0,
        reserve: [[0; 8]; 2],
        drop_pending: 0,
    };
    let mut state = 0x4C4F_415A_4552_4F21; // "LOAZERO!"
    let mut c = 0;
    while c < 2 {
        let mut sq = 0;
        while sq < 64 {
            let (s, v) = splitmix64(state);
            state = s;
            keys.pieces[c][sq] = v;
            sq += 1;
        }
        c += 1;
    }
    let (s, v) = splitmix64(state);
    state = s;
    keys.white_to_move = v;
    let mut sq = 0;
    while sq < 64 {
        let (s, v) = splitmix64(state);
        state = s;
        keys.vanished[sq] = v;
        let (s, v) = splitmix64(state);
        state = s;
        keys.partner[sq] = v;
        sq += 1;
    }
    let mut c = 0;
    while c < 2 {
        let mut n = 0;
        while n < 8 {
            let (s, v) = splitmix64(state);
            state = s;
            keys.reserve[c][n] = v;
            n += 1;
        }
        c += 1;
    }
    let (s, v) = splitmix64(state);
    state = s;
    keys.second_seat = v;
    let (_, v) = splitmix64(state);
    keys.drop_pending = v;
    keys
}

/// The keys used by [`crate::Position`].
pub static ZOBRIST: ZobristKeys = make_keys();
