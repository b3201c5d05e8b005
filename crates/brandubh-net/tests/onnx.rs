//! The ONNX writer: its bytes decode with an independent protobuf reader (prost, with the
//! ONNX messages' field numbers from onnx.proto written out below), the graph has the
//! documented inputs, outputs and operators, and running the decoded graph with a plain
//! interpreter gives burn's outputs (to 1e-4). `scripts/bench-onnxruntime.sh` checks the
//! same bytes in onnxruntime.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests may unwrap: a panic is a failed test"
)]

mod common;

use std::collections::HashMap;

use brandubh_net::encoding::{self, NUM_PLANES, POLICY_SIZE};
use brandubh_net::{NetConfig, onnx};
use burn::module::Module;
use burn::tensor::Device;
use common::{assert_matches_burn, random_inputs, random_leaves, trained_model, unaligned_config};
use prost::Message;

// The subset of onnx.proto (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto) the
// writer emits, with its field numbers.

#[derive(Clone, PartialEq, Message)]
struct ModelProto {
    #[prost(int64, tag = "1")]
    ir_version: i64,
    #[prost(message, repeated, tag = "8")]
    opset_import: Vec<OperatorSetIdProto>,
    #[prost(string, tag = "2")]
    producer_name: String,
    #[prost(message, optional, tag = "7")]
    graph: Option<GraphProto>,
}

#[derive(Clone, PartialEq, Message)]
struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    domain: String,
    #[prost(int64, tag = "2")]
    version: i64,
}

#[derive(Clone, PartialEq, Message)]
struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(message, repeated, tag = "5")]
    initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    output: Vec<ValueInfoProto>,
}

#[derive(Clone, PartialEq, Message)]
struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    output: Vec<String>,
    #[prost(string, tag = "3")]
    name: String,
    #[prost(string, tag = "4")]
    op_type: String,
    #[prost(string, tag = "7")]
    domain: String,
    #[prost(message, repeated, tag = "5")]
    attribute: Vec<AttributeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct AttributeProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(int32, tag = "20")]
    r#type: i32,
    #[prost(int64, tag = "3")]
    i: i64,
    #[prost(int64, repeated, tag = "8")]
    ints: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorProto {
    #[prost(int64, repeated, tag = "1")]
    dims: Vec<i64>,
    #[prost(int32, tag = "2")]
    data_type: i32,
    #[prost(string, tag = "8")]
    name: String,
    #[prost(bytes = "vec", tag = "9")]
    raw_data: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct ValueInfoProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, optional, tag = "2")]
    r#type: Option<TypeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TypeProto {
    #[prost(message, optional, tag = "1")]
    tensor_type: Option<TensorTypeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorTypeProto {
    #[prost(int32, tag = "1")]
    elem_type: i32,
    #[prost(message, optional, tag = "2")]
    shape: Option<TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    dim: Vec<Dimension>,
}

#[derive(Clone, PartialEq, Message)]
struct Dimension {
    #[prost(int64, optional, tag = "1")]
    dim_value: Option<i64>,
    #[prost(string, optional, tag = "2")]
    dim_param: Option<String>,
}

/// `(name, [dims as value or param])` of a value info.
fn shape_of(v: &ValueInfoProto) -> (String, Vec<String>) {
    let t = v
        .r#type
        .as_ref()
        .and_then(|t| t.tensor_type.as_ref())
        .expect("a tensor type");
    assert_eq!(t.elem_type, 1, "{}: float", v.name);
    let dims = t
        .shape
        .as_ref()
        .expect("a shape")
        .dim
        .iter()
        .map(|d| match (&d.dim_value, &d.dim_param) {
            (Some(v), None) => v.to_string(),
            (None, Some(p)) => p.clone(),
            other => panic!("{}: dimension {other:?}", v.name),
        })
        .collect();
    (v.name.clone(), dims)
}

/// A float tensor: shape and values.
#[derive(Clone, Debug)]
struct Array {
    dims: Vec<usize>,
    data: Vec<f32>,
}

fn attr<'a>(node: &'a NodeProto, name: &str) -> &'a AttributeProto {
    node.attribute
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("{}: attribute {name}", node.name))
}

/// ONNX `Conv` (NCHW, square kernel, stride 1, symmetric padding, one group) with bias.
fn conv(x: &Array, w: &Array, b: &Array, node: &NodeProto) -> Array {
    let [n, cin, h, wd] = x.dims[..] else {
        panic!("conv input rank")
    };
    let [cout, wcin, k, k2] = w.dims[..] else {
        panic!("conv weight rank")
    };
    assert_eq!((wcin, k, k2), (cin, k, k));
    assert_eq!(attr(node, "kernel_shape").ints, [k as i64, k as i64]);
    assert_eq!(attr(node, "strides").ints, [1, 1]);
    assert_eq!(attr(node, "group").i, 1);
    let pads = &attr(node, "pads").ints;
    let pad = (k / 2) as i64;
    assert_eq!(pads, &[pad; 4], "{}: same padding", node.name);
    let mut out = vec![0.0f32; n * cout * h * wd];
    for i in 0..n {
        for co in 0..cout {
            for y in 0..h {
                for xx in 0..wd {
                    let mut s = f64::from(b.data[co]);
                    for ci in 0..cin {
                        for ky in 0..k {
                            for kx in 0..k {
                                let sy = y as i64 + ky as i64 - pad;
                                let sx = xx as i64 + kx as i64 - pad;
                                if sy < 0 || sx < 0 || sy >= h as i64 || sx >= wd as i64 {
                                    continue;
                                }
                                let xi = ((i * cin + ci) * h + sy as usize) * wd + sx as usize;
                                let wi = ((co * cin + ci) * k + ky) * k + kx;
                                s += f64::from(x.data[xi]) * f64::from(w.data[wi]);
                            }
                        }
                    }
                    out[((i * cout + co) * h + y) * wd + xx] = s as f32;
                }
            }
        }
    }
    Array {
        dims: vec![n, cout, h, wd],
        data: out,
    }
}

/// ONNX `Gemm` with the default attributes: `a · b + c`.
fn gemm(a: &Array, b: &Array, c: &Array) -> Array {
    let [n, k] = a.dims[..] else {
        panic!("gemm A rank")
    };
    let [k2, m] = b.dims[..] else {
        panic!("gemm B rank")
    };
    assert_eq!(k, k2);
    let mut out = vec![0.0f32; n * m];
    for i in 0..n {
        for j in 0..m {
            let mut s = f64::from(c.data[j]);
            for l in 0..k {
                s += f64::from(a.data[i * k + l]) * f64::from(b.data[l * m + j]);
            }
            out[i * m + j] = s as f32;
        }
    }
    Array {
        dims: vec![n, m],
        data: out,
    }
}

fn map(x: &Array, f: impl Fn(f32) -> f32) -> Array {
    Array {
        dims: x.dims.clone(),
        data: x.data.iter().map(|&v| f(v)).collect(),
    }
}

/// Runs the decoded graph on `input` (`[n, P, 7, 7]`) in node order (the writer emits them
/// topologically sorted); returns every value by name.
fn interpret(graph: &GraphProto, input: Array) -> HashMap<String, Array> {
    let mut values: HashMap<String, Array> = HashMap::new();
    for t in &graph.initializer {
        assert_eq!(t.data_type, 1, "{}: float", t.name);
        let dims: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
        assert_eq!(t.raw_data.len(), 4 * dims.iter().product::<usize>());
        let data = t
            .raw_data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert!(
            values
                .insert(t.name.clone(), Array { dims, data })
                .is_none()
        );
    }
    values.insert(onnx::INPUT_NAME.to_owned(), input);
    for node in &graph.node {
        assert_eq!(node.domain, "", "{}: default domain", node.name);
        assert_eq!(node.output.len(), 1, "{}: one output", node.name);
        let arg = |i: usize| {
            let name = &node.input[i];
            values
                .get(name)
                .unwrap_or_else(|| panic!("{}: input {name} not yet computed", node.name))
        };
        let out = match node.op_type.as_str() {
            "Conv" => conv(arg(0), arg(1), arg(2), node),
            "Gemm" => {
                assert!(node.attribute.is_empty(), "Gemm with default attributes");
                gemm(arg(0), arg(1), arg(2))
            }
            "Relu" => map(arg(0), |v| v.max(0.0)),
            "Tanh" => map(arg(0), f32::tanh),
            "Add" => {
                let (a, b) = (arg(0), arg(1));
                assert_eq!(a.dims, b.dims);
                Array {
                    dims: a.dims.clone(),
                    data: a.data.iter().zip(&b.data).map(|(x, y)| x + y).collect(),
                }
            }
            "Flatten" => {
                assert_eq!(attr(node, "axis").i, 1);
                let a = arg(0);
                Array {
                    dims: vec![a.dims[0], a.dims[1..].iter().product()],
                    data: a.data.clone(),
                }
            }
            op => panic!("unexpected operator {op}"),
        };
        values.insert(node.output[0].clone(), out);
    }
    values
}

#[test]
fn onnx_model_decodes_and_computes_burns_outputs() {
    let config = unaligned_config();
    let model = trained_model(&config, 3).valid();
    let bytes = onnx::to_onnx(&model.fold_batch_norm());
    let decoded = ModelProto::decode(bytes.as_slice()).expect("valid protobuf");
    assert_eq!(decoded.ir_version, onnx::IR_VERSION);
    assert_eq!(decoded.producer_name, "brandubh-net");
    assert_eq!(
        decoded.opset_import,
        [OperatorSetIdProto {
            domain: String::new(),
            version: onnx::OPSET
        }]
    );
    let graph = decoded.graph.expect("a graph");
    let inputs: Vec<_> = graph.input.iter().map(shape_of).collect();
    let outputs: Vec<_> = graph.output.iter().map(shape_of).collect();
    let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        inputs,
        [("planes".to_owned(), s(&["batch", "9", "7", "7"]))]
    );
    assert_eq!(
        outputs,
        [
            ("policy_logits".to_owned(), s(&["batch", "1176"])),
            ("value".to_owned(), s(&["batch", "1"]))
        ]
    );
    // Stem + 2 per block + 2 head convolutions; 3 linear layers; no batch norm left.
    let count = |op: &str| graph.node.iter().filter(|n| n.op_type == op).count();
    assert_eq!(count("Conv"), 1 + 2 * config.blocks + 2);
    assert_eq!(count("Gemm"), 3);
    assert_eq!(count("Add"), config.blocks);
    assert_eq!(count("Tanh"), 1);
    assert_eq!(count("BatchNormalization"), 0);
    // Every weight is a named initializer of the expected size: 2 per conv and per linear.
    assert_eq!(graph.initializer.len(), 2 * (1 + 2 * config.blocks + 2 + 3));

    let n = 5;
    let planes = random_inputs(n, 11);
    let device = Device::flex();
    let (logits, values) = model.infer(&planes, &device);
    let input = Array {
        dims: vec![n, NUM_PLANES, 7, 7],
        data: planes,
    };
    let out = interpret(&graph, input);
    let policy = &out["policy_logits"];
    let value = &out["value"];
    assert_eq!(policy.dims, [n, POLICY_SIZE]);
    assert_eq!(value.dims, [n, 1]);
    assert_matches_burn("onnx", &logits, &values, &policy.data, &value.data);
}

#[test]
fn onnx_bytes_are_deterministic_and_follow_the_weights() {
    let config = NetConfig::new().with_channels(4).with_blocks(1);
    let model = trained_model(&config, 1).valid();
    let a = onnx::to_onnx(&model.fold_batch_norm());
    assert_eq!(a, onnx::to_onnx(&model.fold_batch_norm()));
    let mut folded = model.fold_batch_norm();
    folded.value_fc2.bias[0] += 1.0;
    let b = onnx::to_onnx(&folded);
    assert_eq!(a.len(), b.len());
    assert_ne!(a, b);
}

/// Networks with the King planes (12) or the King and threat planes (16) export with their
/// own input width, and the graph computes burn's outputs on positions encoded that way.
#[test]
fn onnx_models_of_every_layout_take_their_planes() {
    let device = Device::flex();
    for planes in encoding::LAYOUTS {
        let config = unaligned_config().with_planes(planes);
        assert_eq!(config.planes(), planes);
        let model = config.init(&device);
        let decoded = ModelProto::decode(onnx::to_onnx(&model.fold_batch_norm()).as_slice())
            .expect("valid protobuf");
        let graph = decoded.graph.expect("a graph");
        let (name, dims) = shape_of(&graph.input[0]);
        assert_eq!(name, "planes");
        assert_eq!(dims, ["batch", &planes.to_string(), "7", "7"]);
        let leaves = random_leaves(4, 17);
        let mut inputs = Vec::new();
        for leaf in &leaves {
            inputs.extend(encoding::encode_planes(
                &leaf.position,
                leaf.repetitions,
                planes,
            ));
        }
        let (logits, values) = model.infer(&inputs, &device);
        let out = interpret(
            &graph,
            Array {
                dims: vec![leaves.len(), planes, 7, 7],
                data: inputs,
            },
        );
        assert_matches_burn(
            &format!("onnx, {planes} planes"),
            &logits,
            &values,
            &out["policy_logits"].data,
            &out["value"].data,
        );
    }
}
