//! Where every tensor of the network lies in the training step's flat buffers: the
//! trainable weights in one `Vec<f32>` and the batch norms' running statistics in another,
//! each tensor in burn's layout, in the order burn visits the model's tensors (so that a
//! model converts tensor by tensor, and the optimizer state is keyed by the same tensors).

use crate::encoding::{PLANE_SIZE, POLICY_SIZE};
use crate::model::NetConfig;

/// One tensor of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Its path in the model, as burn names it (`blocks.0.conv1.bn.gamma`).
    pub name: String,
    /// Its shape, in burn's layout.
    pub dims: Vec<usize>,
    /// A weight the optimizer trains (`true`) or a running statistic of a batch norm.
    pub trainable: bool,
    /// Where it starts in its buffer (the weights' or the running statistics').
    pub offset: usize,
}

impl Slot {
    /// Number of values.
    #[must_use]
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// Whether it holds no value (never, for a valid config).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its values' range in its buffer.
    #[must_use]
    pub fn range(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.len()
    }
}

/// A convolution without bias and its batch norm: offsets of the weight, γ and β (in the
/// weights) and of the running mean and variance (in the running statistics).
#[derive(Clone, Copy, Debug)]
pub(super) struct ConvBnAt {
    pub(super) w: usize,
    pub(super) gamma: usize,
    pub(super) beta: usize,
    pub(super) mean: usize,
    pub(super) var: usize,
    pub(super) cout: usize,
    pub(super) cin: usize,
    /// Index of its weight's slot; γ and β follow it.
    pub(super) slot: usize,
}

/// A linear layer `y = x·W + b`: offsets of `W` (`[inputs][outputs]`) and `b`.
#[derive(Clone, Copy, Debug)]
pub(super) struct LinearAt {
    pub(super) w: usize,
    pub(super) b: usize,
    pub(super) inputs: usize,
    pub(super) outputs: usize,
}

/// A head: its 1×1 convolution and batch norm, the linear layer on its flattened features,
/// and (value and moves-left heads) the second linear layer to one output.
#[derive(Clone, Copy, Debug)]
pub(super) struct HeadAt {
    pub(super) conv: ConvBnAt,
    pub(super) fc1: LinearAt,
    pub(super) fc2: Option<LinearAt>,
}

/// The network's tensors (see the module documentation).
#[derive(Clone, Debug)]
pub(super) struct Layout {
    pub(super) slots: Vec<Slot>,
    pub(super) weights: usize,
    pub(super) running: usize,
    pub(super) stem: ConvBnAt,
    pub(super) blocks: Vec<[ConvBnAt; 2]>,
    /// Policy, value and (when the model has it) moves-left head.
    pub(super) heads: Vec<HeadAt>,
}

/// Builds a [`Layout`] tensor by tensor, in burn's visiting order.
#[derive(Default)]
struct Builder {
    slots: Vec<Slot>,
    weights: usize,
    running: usize,
}

impl Builder {
    fn tensor(&mut self, name: String, dims: Vec<usize>, trainable: bool) -> usize {
        let len: usize = dims.iter().product();
        let offset = if trainable {
            &mut self.weights
        } else {
            &mut self.running
        };
        let at = *offset;
        *offset += len;
        self.slots.push(Slot {
            name,
            dims,
            trainable,
            offset: at,
        });
        at
    }

    fn conv_bn(&mut self, name: &str, cin: usize, cout: usize, kernel: usize) -> ConvBnAt {
        let slot = self.slots.len();
        let w = self.tensor(
            format!("{name}.conv.weight"),
            vec![cout, cin, kernel, kernel],
            true,
        );
        let gamma = self.tensor(format!("{name}.bn.gamma"), vec![cout], true);
        let beta = self.tensor(format!("{name}.bn.beta"), vec![cout], true);
        let mean = self.tensor(format!("{name}.bn.running_mean"), vec![cout], false);
        let var = self.tensor(format!("{name}.bn.running_var"), vec![cout], false);
        ConvBnAt {
            w,
            gamma,
            beta,
            mean,
            var,
            cout,
            cin,
            slot,
        }
    }

    fn linear(&mut self, name: &str, inputs: usize, outputs: usize) -> LinearAt {
        let w = self.tensor(format!("{name}.weight"), vec![inputs, outputs], true);
        let b = self.tensor(format!("{name}.bias"), vec![outputs], true);
        LinearAt {
            w,
            b,
            inputs,
            outputs,
        }
    }
}

impl Layout {
    pub(super) fn new(config: &NetConfig) -> Layout {
        let mut b = Builder::default();
        let c = config.channels;
        let stem = b.conv_bn("stem", config.planes(), c, 3);
        let blocks = (0..config.blocks)
            .map(|i| {
                [
                    b.conv_bn(&format!("blocks.{i}.conv1"), c, c, 3),
                    b.conv_bn(&format!("blocks.{i}.conv2"), c, c, 3),
                ]
            })
            .collect();
        let (pc, vc) = (config.policy_channels, config.value_channels);
        let policy = HeadAt {
            conv: b.conv_bn("policy_conv", c, pc, 1),
            fc1: b.linear("policy_fc", pc * PLANE_SIZE, POLICY_SIZE),
            fc2: None,
        };
        let value_conv = b.conv_bn("value_conv", c, vc, 1);
        let value_fc1 = b.linear("value_fc1", vc * PLANE_SIZE, config.value_hidden);
        let value_fc2 = b.linear("value_fc2", config.value_hidden, 1);
        let mut heads = vec![
            policy,
            HeadAt {
                conv: value_conv,
                fc1: value_fc1,
                fc2: Some(value_fc2),
            },
        ];
        if let Some(m) = config.moves_left_hidden {
            heads.push(HeadAt {
                conv: b.conv_bn("moves_left.conv", c, vc, 1),
                fc1: b.linear("moves_left.fc1", vc * PLANE_SIZE, m),
                fc2: Some(b.linear("moves_left.fc2", m, 1)),
            });
        }
        Layout {
            slots: b.slots,
            weights: b.weights,
            running: b.running,
            stem,
            blocks,
            heads,
        }
    }

    /// The 3×3 convolutions in order: the stem, then each block's two.
    pub(super) fn convs(&self) -> Vec<ConvBnAt> {
        std::iter::once(self.stem)
            .chain(self.blocks.iter().flatten().copied())
            .collect()
    }

    /// Every batch norm, in the step's order: the 3×3 convolutions', then the heads'.
    pub(super) fn batch_norms(&self) -> Vec<ConvBnAt> {
        let mut all = self.convs();
        all.extend(self.heads.iter().map(|h| h.conv));
        all
    }

    /// The slots of the moves-left head (their weights get no gradient from a batch without
    /// moves-left targets).
    pub(super) fn moves_left_slots(&self) -> std::ops::Range<usize> {
        match self.heads.get(2) {
            Some(head) => head.conv.slot..self.slots.len(),
            None => self.slots.len()..self.slots.len(),
        }
    }
}
