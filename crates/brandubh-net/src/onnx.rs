//! A [`FoldedNet`] as a standard ONNX model, so that other runtimes (onnxruntime, …) run
//! the project's networks on the very same weights as the fast path.
//!
//! The model (ONNX IR version [`IR_VERSION`], default-domain opset [`OPSET`]) has:
//! - input `planes`: float `[batch, P, 7, 7]` ([`crate::encoding`]'s planes in the
//!   network's layout, P = 9, 12, 16 or 19: [`crate::NetConfig::planes`]; the batch dimension
//!   dynamic);
//! - outputs `policy_logits`: float `[batch, 1176]` (not masked) and `value`: float
//!   `[batch, 1]` in (-1, 1), from the side to move's view; the same numbers as
//!   [`crate::FastNet::forward`] up to rounding;
//! - only `Conv` (3×3 or 1×1, zero padding keeping 7×7, with bias: batch norm is folded),
//!   `Relu`, `Add`, `Flatten`, `Gemm` and `Tanh` nodes, the weights as float initializers.
//!
//! The protobuf encoding is written here: the handful of ONNX messages needed are small,
//! and the tests decode the bytes with an independent protobuf reader.
//!
//! ```
//! use brandubh_net::{NetConfig, onnx};
//! use burn::tensor::Device;
//!
//! let model = NetConfig::new().with_channels(8).with_blocks(1).init(&Device::flex());
//! let bytes = onnx::to_onnx(&model.fold_batch_norm());
//! assert!(bytes.len() > 4 * 2 * 49 * 1176); // the policy layer's weights alone
//! ```

use crate::encoding::{BOARD_SIZE, POLICY_SIZE};
use crate::folded::{FoldedConv, FoldedLinear, FoldedNet};

/// The ONNX IR version written.
pub const IR_VERSION: i64 = 8;
/// The opset of the default (`ai.onnx`) domain the graph uses.
pub const OPSET: i64 = 17;
/// Name of the graph's input.
pub const INPUT_NAME: &str = "planes";
/// Name of the policy output.
pub const POLICY_OUTPUT: &str = "policy_logits";
/// Name of the value output.
pub const VALUE_OUTPUT: &str = "value";
/// The symbolic batch dimension of the input and outputs.
pub const BATCH_DIM: &str = "batch";

/// ONNX `TensorProto.DataType.FLOAT`.
const FLOAT: i64 = 1;
/// ONNX `AttributeProto.AttributeType` values used.
const ATTR_INT: i64 = 2;
const ATTR_INTS: i64 = 7;

/// The ONNX model bytes of `net` (see the module documentation).
#[must_use]
pub fn to_onnx(net: &FoldedNet) -> Vec<u8> {
    let mut g = Graph::default();
    let mut x = g.conv("stem", &net.stem, INPUT_NAME);
    x = g.unary("Relu", "stem.relu", &x);
    for (i, block) in net.blocks.iter().enumerate() {
        let name = format!("blocks.{i}");
        let y = g.conv(&format!("{name}.conv1"), &block.conv1, &x);
        let y = g.unary("Relu", &format!("{name}.relu1"), &y);
        let y = g.conv(&format!("{name}.conv2"), &block.conv2, &y);
        let y = g.node("Add", &format!("{name}.add"), &[&y, &x], vec![]);
        x = g.unary("Relu", &format!("{name}.relu2"), &y);
    }
    let p = g.conv("policy_conv", &net.policy_conv, &x);
    let p = g.unary("Relu", "policy_conv.relu", &p);
    let p = g.flatten("policy_flatten", &p);
    g.gemm_to("policy_fc", &net.policy_fc, &p, POLICY_OUTPUT);
    let v = g.conv("value_conv", &net.value_conv, &x);
    let v = g.unary("Relu", "value_conv.relu", &v);
    let v = g.flatten("value_flatten", &v);
    let v = g.gemm("value_fc1", &net.value_fc1, &v);
    let v = g.unary("Relu", "value_fc1.relu", &v);
    let v = g.gemm("value_fc2", &net.value_fc2, &v);
    g.nodes
        .push(node("Tanh", "value_tanh", &[&v], &[VALUE_OUTPUT], vec![]));

    let side = BOARD_SIZE as i64;
    let mut graph = Vec::new();
    for n in &g.nodes {
        message(&mut graph, 1, n);
    }
    string(&mut graph, 2, "brandubh_policy_value_net");
    for t in &g.initializers {
        message(&mut graph, 5, t);
    }
    let c = &net.config;
    string(
        &mut graph,
        10,
        &format!(
            "Brandubh policy-value ResNet C{}xN{}, batch norm folded; heads {}/{}/{}",
            c.channels, c.blocks, c.policy_channels, c.value_channels, c.value_hidden
        ),
    );
    message(
        &mut graph,
        11,
        &value_info(
            INPUT_NAME,
            &[None, Some(c.planes() as i64), Some(side), Some(side)],
        ),
    );
    message(
        &mut graph,
        12,
        &value_info(POLICY_OUTPUT, &[None, Some(POLICY_SIZE as i64)]),
    );
    message(&mut graph, 12, &value_info(VALUE_OUTPUT, &[None, Some(1)]));

    let mut model = Vec::new();
    int(&mut model, 1, IR_VERSION);
    string(&mut model, 2, "brandubh-net");
    string(&mut model, 3, env!("CARGO_PKG_VERSION"));
    int(&mut model, 5, 1);
    message(&mut model, 7, &graph);
    let mut opset = Vec::new();
    string(&mut opset, 1, "");
    int(&mut opset, 2, OPSET);
    message(&mut model, 8, &opset);
    model
}

/// The graph being built: encoded nodes and initializers.
#[derive(Default)]
struct Graph {
    nodes: Vec<Vec<u8>>,
    initializers: Vec<Vec<u8>>,
}

impl Graph {
    /// A float initializer `name` of shape `dims`.
    fn weight(&mut self, name: &str, dims: &[usize], values: &[f32]) -> String {
        debug_assert_eq!(dims.iter().product::<usize>(), values.len());
        let mut t = Vec::new();
        for &d in dims {
            int(&mut t, 1, d as i64);
        }
        int(&mut t, 2, FLOAT);
        string(&mut t, 8, name);
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        bytes(&mut t, 9, &raw);
        self.initializers.push(t);
        name.to_owned()
    }

    /// A node with one output named `name`; returns that name.
    fn node(&mut self, op: &str, name: &str, inputs: &[&str], attrs: Vec<Vec<u8>>) -> String {
        self.nodes.push(node(op, name, inputs, &[name], attrs));
        name.to_owned()
    }

    fn unary(&mut self, op: &str, name: &str, input: &str) -> String {
        self.node(op, name, &[input], vec![])
    }

    /// A convolution with bias keeping the 7×7 board.
    fn conv(&mut self, name: &str, conv: &FoldedConv, input: &str) -> String {
        let k = conv.kernel;
        let w = self.weight(
            &format!("{name}.weight"),
            &[conv.cout, conv.cin, k, k],
            &conv.weight,
        );
        let b = self.weight(&format!("{name}.bias"), &[conv.cout], &conv.bias);
        let pad = (k / 2) as i64;
        let k = k as i64;
        let attrs = vec![
            ints_attr("kernel_shape", &[k, k]),
            ints_attr("pads", &[pad; 4]),
            ints_attr("strides", &[1, 1]),
            ints_attr("dilations", &[1, 1]),
            int_attr("group", 1),
        ];
        self.node("Conv", name, &[input, &w, &b], attrs)
    }

    /// `[batch, C, 7, 7]` → `[batch, C·49]`, channel-major (burn's flatten).
    fn flatten(&mut self, name: &str, input: &str) -> String {
        self.node("Flatten", name, &[input], vec![int_attr("axis", 1)])
    }

    fn gemm(&mut self, name: &str, layer: &FoldedLinear, input: &str) -> String {
        self.gemm_to(name, layer, input, name);
        name.to_owned()
    }

    /// `output = input · W + b` with `W` stored `[in][out]` (no transpose).
    fn gemm_to(&mut self, name: &str, layer: &FoldedLinear, input: &str, output: &str) {
        let w = self.weight(
            &format!("{name}.weight"),
            &[layer.inputs, layer.outputs],
            &layer.weight,
        );
        let b = self.weight(&format!("{name}.bias"), &[layer.outputs], &layer.bias);
        self.nodes
            .push(node("Gemm", name, &[input, &w, &b], &[output], vec![]));
    }
}

fn node(op: &str, name: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<Vec<u8>>) -> Vec<u8> {
    let mut n = Vec::new();
    for i in inputs {
        string(&mut n, 1, i);
    }
    for o in outputs {
        string(&mut n, 2, o);
    }
    string(&mut n, 3, name);
    string(&mut n, 4, op);
    for a in &attrs {
        message(&mut n, 5, a);
    }
    n
}

fn int_attr(name: &str, value: i64) -> Vec<u8> {
    let mut a = Vec::new();
    string(&mut a, 1, name);
    int(&mut a, 3, value);
    int(&mut a, 20, ATTR_INT);
    a
}

fn ints_attr(name: &str, values: &[i64]) -> Vec<u8> {
    let mut a = Vec::new();
    string(&mut a, 1, name);
    for &v in values {
        int(&mut a, 8, v);
    }
    int(&mut a, 20, ATTR_INTS);
    a
}

/// A float tensor's `ValueInfoProto`; `None` dimensions are the symbolic batch.
fn value_info(name: &str, dims: &[Option<i64>]) -> Vec<u8> {
    let mut shape = Vec::new();
    for d in dims {
        let mut dim = Vec::new();
        match d {
            Some(v) => int(&mut dim, 1, *v),
            None => string(&mut dim, 2, BATCH_DIM),
        }
        message(&mut shape, 1, &dim);
    }
    let mut tensor = Vec::new();
    int(&mut tensor, 1, FLOAT);
    message(&mut tensor, 2, &shape);
    let mut ty = Vec::new();
    message(&mut ty, 1, &tensor);
    let mut v = Vec::new();
    string(&mut v, 1, name);
    message(&mut v, 2, &ty);
    v
}

// Protobuf wire format: a key `field << 3 | wire type`, then a varint (type 0) or a
// length-delimited payload (type 2). Negative ints are not written.

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn int(out: &mut Vec<u8>, field: u32, v: i64) {
    varint(out, u64::from(field) << 3);
    varint(out, v as u64);
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    varint(out, (u64::from(field) << 3) | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn string(out: &mut Vec<u8>, field: u32, s: &str) {
    bytes(out, field, s.as_bytes());
}

fn message(out: &mut Vec<u8>, field: u32, m: &[u8]) {
    bytes(out, field, m);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_little_endian_base_128() {
        let enc = |v| {
            let mut out = Vec::new();
            varint(&mut out, v);
            out
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(1), [1]);
        assert_eq!(enc(127), [127]);
        assert_eq!(enc(128), [0x80, 1]);
        assert_eq!(enc(300), [0xac, 0x02]);
        assert_eq!(enc(u64::MAX).len(), 10);
    }
}
