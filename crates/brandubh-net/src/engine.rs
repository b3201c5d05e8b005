//! One model, two engines: a training step by burn's autodiff ([`Trainer`], the reference
//! and the route to other devices) or by the fast path's hand-written step
//! ([`FastTrainer`], on the CPU). Both start from and end in a [`Trainer`], i.e. a burn model
//! and burn's optimizer state, so that a checkpoint is the same files whichever engine
//! wrote it and a run continues across engines.
//!
//! ```
//! use brandubh_net::engine::{Engine, EngineKind};
//! use brandubh_net::optimize::{BatchBuilder, OptimizerConfig, Trainer};
//! use brandubh_net::NetConfig;
//! use brandubh_rules::{Position, Symmetry};
//! use burn::tensor::Device;
//!
//! let model = NetConfig::new().with_channels(8).with_blocks(1).init(&Device::flex().autodiff());
//! let mut engine = Engine::new(Trainer::new(model, OptimizerConfig::default()), EngineKind::Fast)?;
//! let position = Position::start();
//! let moves = position.legal_moves();
//! let policy = vec![1.0 / moves.len() as f32; moves.len()];
//! let mut batch = BatchBuilder::new();
//! batch.push_position(&position, 1, &moves, &policy, 0.0, Symmetry::Identity)?;
//! let stats = engine.step(&batch, 1e-3);
//! assert!(stats.policy_loss.is_finite());
//! let trainer = engine.into_trainer()?; // a burn model and optimizer again, one step on
//! assert_eq!(trainer.steps(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Bytes, DType, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::fast::train::{FastTrainer, OptimizerState, Slot};
use crate::model::PolicyValueNet;
use crate::optimize::{BatchBuilder, OptimizerKind, StepStats, Trainer};

/// Which implementation runs the training step (`training.engine` of a run's config).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// The fast path's hand-written step on the CPU ([`FastTrainer`]).
    #[default]
    Fast,
    /// burn's autodiff on the model's device ([`Trainer`]).
    Burn,
}

impl EngineKind {
    /// `fast` or `burn`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Fast => "fast",
            EngineKind::Burn => "burn",
        }
    }
}

/// A model in training on one of the two engines (see the module documentation).
#[derive(Debug)]
pub enum Engine {
    /// burn's autodiff.
    Burn(Box<Trainer>),
    /// The fast path; `template` is the burn trainer it started from, whose model and
    /// optimizer take its weights and state back.
    Fast {
        /// The trainer.
        fast: Box<FastTrainer>,
        /// The burn trainer it was made from.
        template: Box<Trainer>,
    },
}

impl Engine {
    /// `trainer` on the engine `kind`; the fast engine copies out its weights, running
    /// statistics and optimizer state. The error says what does not convert.
    pub fn new(trainer: Trainer, kind: EngineKind) -> Result<Engine, String> {
        match kind {
            EngineKind::Burn => Ok(Engine::Burn(Box::new(trainer))),
            EngineKind::Fast => Ok(Engine::Fast {
                fast: Box::new(to_fast(&trainer)?),
                template: Box::new(trainer),
            }),
        }
    }

    /// Which engine this is.
    #[must_use]
    pub fn kind(&self) -> EngineKind {
        match self {
            Engine::Burn(_) => EngineKind::Burn,
            Engine::Fast { .. } => EngineKind::Fast,
        }
    }

    /// One optimizer step on the samples of `batch` with learning rate `lr`; the losses
    /// before the step.
    pub fn step(&mut self, batch: &BatchBuilder, lr: f64) -> StepStats {
        match self {
            Engine::Burn(trainer) => trainer.step(&batch.build(trainer.device()), lr),
            Engine::Fast { fast, .. } => fast.step(&batch.view(), lr),
        }
    }

    /// The fast engine on the kernels of `level` (`None` if this CPU does not have them);
    /// burn's unchanged.
    #[must_use]
    pub fn with_simd_level(self, level: crate::fast::SimdLevel) -> Option<Engine> {
        match self {
            Engine::Burn(trainer) => Some(Engine::Burn(trainer)),
            Engine::Fast { fast, template } => Some(Engine::Fast {
                fast: Box::new((*fast).with_simd_level(level)?),
                template,
            }),
        }
    }

    /// Optimizer steps behind the model.
    #[must_use]
    pub fn steps(&self) -> u64 {
        match self {
            Engine::Burn(trainer) => trainer.steps(),
            Engine::Fast { fast, .. } => fast.steps(),
        }
    }

    /// The model and its optimizer as a burn [`Trainer`] (for a checkpoint, or to go on with
    /// burn).
    pub fn into_trainer(self) -> Result<Trainer, String> {
        match self {
            Engine::Burn(trainer) => Ok(*trainer),
            Engine::Fast { fast, template } => from_fast(&fast, *template),
        }
    }
}

/// Every float tensor of a module in visiting order: its path, id, shape and values.
#[derive(Default)]
struct Collect {
    path: Vec<String>,
    tensors: Vec<(String, u64, Vec<usize>, Vec<f32>)>,
}

impl ModuleVisitor for Collect {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_owned());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let tensor = param.val();
        let dims = tensor.dims().to_vec();
        let values = crate::model::tensor_to_vec(tensor);
        self.tensors
            .push((self.path.join("."), param.id.val(), dims, values));
    }
}

/// A model's tensor ids (by slot), weights and running statistics.
type ModelTensors = (Vec<u64>, Vec<f32>, Vec<f32>);

/// The tensors of `model` (pending running-statistics updates folded in), checked against
/// the fast trainer's layout.
fn read_model(model: &PolicyValueNet, slots: &[Slot]) -> Result<ModelTensors, String> {
    let mut collect = Collect::default();
    model.valid().visit(&mut collect);
    if collect.tensors.len() != slots.len() {
        return Err(format!(
            "the model has {} tensors, the fast trainer {}",
            collect.tensors.len(),
            slots.len()
        ));
    }
    let (mut ids, mut weights, mut running) = (Vec::new(), Vec::new(), Vec::new());
    for ((path, id, dims, values), slot) in collect.tensors.into_iter().zip(slots) {
        if path != slot.name || dims != slot.dims {
            return Err(format!(
                "the model's tensor {path} {dims:?} is not the fast trainer's {} {:?}",
                slot.name, slot.dims
            ));
        }
        ids.push(id);
        if slot.trainable {
            weights.extend(values);
        } else {
            running.extend(values);
        }
    }
    Ok((ids, weights, running))
}

/// The fast trainer of `trainer`'s model and optimizer state.
fn to_fast(trainer: &Trainer) -> Result<FastTrainer, String> {
    let config = trainer.model().config();
    let slots = FastTrainer::slots_of(&config);
    let (ids, weights, running) = read_model(trainer.model(), &slots)?;
    let state = read_state(trainer, &slots, &ids, weights.len())?;
    FastTrainer::new(
        &config,
        *trainer.config(),
        weights,
        running,
        state,
        trainer.steps(),
    )
}

/// The optimizer state of `trainer` laid out like the fast trainer's weights: burn keeps
/// it per tensor id, as `ID.momentum.moment_1` / `moment_2` and the scalar
/// `ID.momentum.time` (Adam), or `ID.momentum.velocity` (SGD).
fn read_state(
    trainer: &Trainer,
    slots: &[Slot],
    ids: &[u64],
    len: usize,
) -> Result<OptimizerState, String> {
    let bad = |e: &dyn std::fmt::Debug| format!("burn's optimizer state: {e:?}");
    let bytes = trainer.optimizer().into_bytes().map_err(|e| bad(&e))?;
    let reader = burn_pack::Reader::from_bytes(bytes).map_err(|e| bad(&e))?;
    let scalars = reader.scalars().clone();
    let by_id: BTreeMap<u64, usize> = ids.iter().enumerate().map(|(s, &id)| (id, s)).collect();
    let mut state = OptimizerState {
        time: vec![0; slots.len()],
        first: vec![0.0; len],
        second: vec![0.0; len],
    };
    for tensor in reader.into_tensors().map_err(|e| bad(&e))? {
        let (name, dtype, shape, _, bytes) = tensor.into_parts().map_err(|e| bad(&e))?;
        let (id, field) = name
            .split_once('.')
            .and_then(|(id, field)| Some((id.parse::<u64>().ok()?, field)))
            .ok_or_else(|| format!("burn's optimizer state: unexpected tensor {name}"))?;
        let Some(&s) = by_id.get(&id) else {
            return Err(format!(
                "burn's optimizer state: {name} belongs to no tensor of the model"
            ));
        };
        let slot = &slots[s];
        let values = TensorData::from_bytes(bytes, shape, dtype)
            .try_to_vec::<f32>()
            .map_err(|e| bad(&e))?;
        if values.len() != slot.len() {
            return Err(format!(
                "burn's optimizer state: {name} has {} values, {} has {}",
                values.len(),
                slot.name,
                slot.len()
            ));
        }
        let target = match field {
            "momentum.moment_1" | "momentum.velocity" => &mut state.first,
            "momentum.moment_2" => &mut state.second,
            _ => return Err(format!("burn's optimizer state: unexpected tensor {name}")),
        };
        target[slot.range()].copy_from_slice(&values);
        let time = scalars
            .get(&format!("{id}.momentum.time"))
            .and_then(|t| usize::try_from(*t).ok())
            .unwrap_or(1);
        state.time[s] = time;
    }
    Ok(state)
}

/// `template` with the fast trainer's weights, running statistics and optimizer state
/// (tensor ids kept), at its step.
fn from_fast(fast: &FastTrainer, template: Trainer) -> Result<Trainer, String> {
    let config = *fast.optimizer();
    let model = template.into_model();
    let slots = fast.slots();
    let mut ids = Vec::new();
    let model = model.map(&mut Replace {
        slots,
        weights: fast.weights(),
        running: fast.running(),
        next: 0,
        ids: &mut ids,
    });
    if ids.len() != slots.len() {
        return Err(format!(
            "the model has {} tensors, the fast trainer {}",
            ids.len(),
            slots.len()
        ));
    }
    let bytes = write_state(fast, &ids)?;
    let optimizer = config
        .optimizer()
        .from_bytes(bytes)
        .map_err(|e| format!("the fast trainer's optimizer state: {e:?}"))?;
    Ok(Trainer::from_parts(model, optimizer, config, fast.steps()))
}

/// Gives each float tensor of a module, in visiting order, the values of its slot (same
/// device, id and require-grad state), recording the ids.
struct Replace<'a> {
    slots: &'a [Slot],
    weights: &'a [f32],
    running: &'a [f32],
    next: usize,
    ids: &'a mut Vec<u64>,
}

impl ModuleMapper for Replace<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        self.ids.push(param.id.val());
        let Some(slot) = self.slots.get(self.next) else {
            return param;
        };
        self.next += 1;
        let source = if slot.trainable {
            self.weights
        } else {
            self.running
        };
        let values = source[slot.range()].to_vec();
        let dims = slot.dims.clone();
        param.map(|tensor| {
            let require_grad = tensor.is_require_grad();
            let fresh = Tensor::from_data(TensorData::new(values, dims), &tensor.device());
            if require_grad {
                fresh.require_grad()
            } else {
                fresh
            }
        })
    }
}

/// The fast trainer's optimizer state as burn writes it (see [`read_state`]): per tensor
/// with a state, its moments (or velocity), its update count and rank, and its path.
fn write_state(fast: &FastTrainer, ids: &[u64]) -> Result<Bytes, String> {
    let state = fast.optimizer_state();
    let adam = fast.optimizer().optimizer == OptimizerKind::Adam;
    let mut tensors = Vec::new();
    let mut scalars = Vec::new();
    let mut paths = Vec::new();
    for ((slot, &id), &time) in fast.slots().iter().zip(ids).zip(&state.time) {
        if !slot.trainable || time == 0 {
            continue;
        }
        let mut push = |field: &str, values: &[f32]| {
            let data = TensorData::new(values.to_vec(), slot.dims.clone());
            let (bytes, shape, dtype) = data.into_parts();
            debug_assert_eq!(dtype, DType::F32);
            tensors.push(burn_pack::Tensor::new(
                format!("{id}.{field}"),
                dtype,
                shape,
                Some(id),
                bytes,
            ));
        };
        if adam {
            push("momentum.moment_1", &state.first[slot.range()]);
            push("momentum.moment_2", &state.second[slot.range()]);
            scalars.push((format!("{id}.momentum.time"), burn_pack::Scalar::from(time)));
        } else {
            push("momentum.velocity", &state.first[slot.range()]);
        }
        scalars.push((
            format!("{id}.__rank"),
            burn_pack::Scalar::from(slot.dims.len()),
        ));
        paths.push((id.to_string(), slot.name.clone()));
    }
    let mut writer = burn_pack::Writer::new(tensors);
    for (key, value) in &scalars {
        writer = writer.with_scalar(key, *value);
    }
    for (key, value) in &paths {
        writer = writer.with_metadata(key, value);
    }
    writer
        .into_bytes()
        .map_err(|e| format!("the fast trainer's optimizer state: {e:?}"))
}
