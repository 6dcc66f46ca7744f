//! Model and checkpoint files, the safetensors layer (`train::tensor_file::parse_layout`,
//! torch-free, checked before any tensor is made): a layout that parses has every tensor
//! `f32`, its bytes inside the file, contiguous, and its shape's size equal to them; the
//! safetensors crate agrees with it. The description then goes through `ModelInfo::parse`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use train::tensor_file::parse_layout;
use train::ModelInfo;

fuzz_target!(|data: &[u8]| {
    let Ok(layout) = parse_layout(data) else {
        return;
    };
    let mut end = None;
    for t in &layout.tensors {
        if let Some(e) = end {
            assert_eq!(t.data.start, e, "tensors are not contiguous");
        }
        end = Some(t.data.end);
        assert!(t.data.start <= t.data.end && t.data.end <= data.len());
        let elements: i64 = t.shape.iter().product();
        assert!(t.shape.iter().all(|&d| d >= 0));
        assert_eq!(elements as usize * 4, t.data.len(), "{}", t.name);
    }
    assert_eq!(end.unwrap_or(layout.data_start), data.len());
    let st = safetensors::SafeTensors::deserialize(data).expect("safetensors agrees");
    assert_eq!(st.names().len(), layout.tensors.len());
    for t in &layout.tensors {
        let view = st.tensor(&t.name).expect("tensor present");
        assert_eq!(view.data(), &data[t.data.clone()]);
    }
    if let Ok(info) = ModelInfo::parse(&layout.description, Path::new("fuzz.safetensors")) {
        let elements = layout.tensors.iter().map(|t| t.data.len() as u64 / 4).sum();
        let _ = info.check_weight_count(elements, Path::new("fuzz.safetensors"));
    }
});
