//! The network's input tensor: positions encoded ([`crate::encoding`]) one after another,
//! as one `u8` tensor of shape `[rows, planes, size, size]` for a variant's layout and a
//! plane set. Every forward pass builds its input here (inference, training batches,
//! held-out scoring, export examples, speed measurements).

use crate::encoding::{encode_into, input_len, num_planes, PlaneSet};
use loa::{Position, Variant};
use tch::{TchError, Tensor};

/// `data`, whole encoded rows of `variant`'s layout under `plane_set` (as
/// [`encode_into`] writes them), as the input tensor `[rows, planes, size, size]`. Errors:
/// `data` is not a whole number of rows.
pub fn from_encoded(
    data: &[u8],
    variant: Variant,
    plane_set: PlaneSet,
) -> Result<Tensor, TchError> {
    let len = input_len(variant, plane_set);
    let n = variant.geometry().size as i64;
    if len == 0 || !data.len().is_multiple_of(len) {
        return Err(TchError::Shape(format!(
            "{} input bytes are not whole rows of {len} ({variant}, {} planes)",
            data.len(),
            num_planes(variant, plane_set)
        )));
    }
    Tensor::f_from_slice(data)?.f_view([
        (data.len() / len) as i64,
        num_planes(variant, plane_set) as i64,
        n,
        n,
    ])
}

/// The input tensor of `positions` (each of `variant`'s layout), one row each, in order.
/// Errors: a position of another layout.
pub fn of_positions<'a>(
    positions: impl IntoIterator<Item = &'a Position>,
    variant: Variant,
    plane_set: PlaneSet,
) -> Result<Tensor, TchError> {
    let len = input_len(variant, plane_set);
    let mut data = Vec::new();
    for (i, pos) in positions.into_iter().enumerate() {
        let size = input_len(pos.variant(), plane_set);
        if size != len {
            return Err(TchError::Shape(format!(
                "position {i} is a {} position ({size} input bytes); the tensor is for \
                 {variant}'s layout ({len})",
                pos.variant()
            )));
        }
        data.resize((i + 1) * len, 0);
        encode_into(pos, plane_set, &mut data[i * len..]);
    }
    from_encoded(&data, variant, plane_set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::encode;
    use loa::Rules;

    #[test]
    fn rows_are_the_encoded_positions_in_order() {
        let rules = Rules::classic();
        let a = Position::start(Variant::Standard, &rules);
        let mut b = a;
        b.play(a.legal_moves(&rules)[3]);
        let plane_set = PlaneSet::Board;
        let x = of_positions([&a, &b], Variant::Standard, plane_set).unwrap();
        let planes = num_planes(Variant::Standard, plane_set) as i64;
        assert_eq!(x.size(), [2, planes, 8, 8]);
        assert_eq!(x.kind(), tch::Kind::Uint8);
        let flat = Vec::<u8>::try_from(x.flatten(0, -1)).unwrap();
        assert_eq!(
            flat,
            [encode(&a, plane_set), encode(&b, plane_set)].concat()
        );
        let empty = of_positions([], Variant::Standard, plane_set).unwrap();
        assert_eq!(empty.size(), [0, planes, 8, 8]);
    }

    #[test]
    fn bad_input_is_an_error_naming_it() {
        let rules = Rules::classic();
        let six = Position::start(Variant::Six, &rules);
        let e = of_positions([&six], Variant::Standard, PlaneSet::Board)
            .unwrap_err()
            .to_string();
        assert!(e.contains("position 0") && e.contains("layout"), "{e}");
        let e = from_encoded(&[0; 5], Variant::Standard, PlaneSet::Board)
            .unwrap_err()
            .to_string();
        assert!(e.contains("5 input bytes"), "{e}");
    }
}
