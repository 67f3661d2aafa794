#!/usr/bin/python3
"""Exports the torchvision classifiers and the two dynamic-shape test models to ONNX.

    /usr/bin/python3 tests/models/export_models.py CACHE_DIR

Writes CACHE_DIR/vision/{resnet18,mobilenet_v2,mobilenet_v3_small,squeezenet1_1}.onnx and
CACHE_DIR/dyn/{dyncnn,two_inputs}.onnx. Every model is written to a temporary name and renamed, so
an interrupted run never leaves a half-written model behind.

Weights. Pretrained torchvision weights cannot be downloaded here (no network), so every model keeps
torchvision's own default initialisation under a fixed torch.manual_seed. With that initialisation
alone each BatchNormalization would be an identity in eval mode (running_mean 0, running_var 1,
gamma 1, beta 0), and an identity BN hides bugs in the engine's BN (or BN folding). So, seeded too:
gamma ~ U(0.5, 1.5), beta ~ N(0, 0.1), and running_mean / running_var are the statistics the network
itself produces on a few seeded random batches (a calibration pass in train mode with momentum=None,
i.e. the cumulative average). Calibrated statistics keep the activations of the deep models well
scaled, so the outputs are neither overflowing nor collapsed, while every BN does real work.
The outputs are therefore meaningless as ImageNet classes but exactly reproducible, which is all a
numeric reference needs. Exported in eval mode, opset 13, constant folding on. The exporter folds
BN into the preceding Conv in the torchvision models (so the seeded BN values live in the conv
weights); dyncnn keeps its three BatchNormalization nodes so the engine's BN kernel is exercised.
"""
import os
import pathlib
import sys

import torch
import torch.nn as nn
import torchvision

OPSET = 13
SEED = 20261130
torch.set_num_threads(min(2, os.cpu_count() or 1))


def seeded_batchnorm(model: nn.Module, calibration: list) -> nn.Module:
    """Gives every BN seeded affine parameters and running statistics measured on `calibration`."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for bn in bns:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0.0, 0.1)
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over the calibration batches
        if bns:
            model.train()
            for batch in calibration:
                model(*batch)
        for bn in bns:
            bn.momentum = 0.1  # back to the default, which is what the exported attribute shows
    model.eval()
    return model


def export(model: nn.Module, args: tuple, path: pathlib.Path, input_names, output_names, dynamic_axes=None,
           keep_batchnorm=False, opset=OPSET):
    # In EVAL mode the exporter folds every BatchNormalization into the preceding Conv (what users
    # get from torchvision); PRESERVE with a model in eval mode keeps them as BatchNormalization nodes.
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix('.onnx.tmp')
    mode = torch.onnx.TrainingMode.PRESERVE if keep_batchnorm else torch.onnx.TrainingMode.EVAL
    with torch.no_grad():
        torch.onnx.export(model, args, str(tmp), opset_version=opset, do_constant_folding=True,
                          input_names=input_names, output_names=output_names, dynamic_axes=dynamic_axes,
                          training=mode)
    os.replace(tmp, path)
    print(f'  wrote {path}')


def export_vision(cache: pathlib.Path):
    for name in ['resnet18', 'mobilenet_v2', 'mobilenet_v3_small', 'squeezenet1_1']:
        torch.manual_seed(SEED)
        model = getattr(torchvision.models, name)(weights=None)
        calibration = [(torch.randn(4, 3, 224, 224),) for _ in range(2)]
        seeded_batchnorm(model, calibration)
        export(model, (torch.randn(1, 3, 224, 224),), cache / 'vision' / f'{name}.onnx', ['input'], ['logits'])


class DynCnn(nn.Module):
    """conv-bn-relu x3 (strides 2, 2, 1) + global average pool + linear(10); any H, W >= 1."""

    def __init__(self):
        super().__init__()

        def block(cin, cout, stride):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

        self.features = nn.Sequential(block(3, 16, 2), block(16, 32, 2), block(32, 32, 1))
        self.classifier = nn.Linear(32, 10)

    def forward(self, data):
        features = self.features(data)
        # mean over H and W rather than AdaptiveAvgPool2d: exports as ReduceMean, whose output
        # shape does not depend on the traced H and W.
        pooled = features.mean(dim=(2, 3))
        return self.classifier(pooled), features


class TwoInputs(nn.Module):
    """Two inputs of independent dynamic length: a [1, L1], b [1, L2].

    Each input is embedded token by token (a linear layer 1 -> 8 applied to every element), passed
    through ReLU, averaged over its length and projected by its own linear layer 8 -> 4; the two
    projections are summed. Outputs y [1, 4] (fixed) and a_features [1, L1, 8] (follows L1), so
    tests see both a fixed and a dynamic output shape.
    """

    def __init__(self):
        super().__init__()
        self.embed_a, self.embed_b = nn.Linear(1, 8), nn.Linear(1, 8)
        self.project_a, self.project_b = nn.Linear(8, 4), nn.Linear(8, 4)

    def forward(self, a, b):
        a_features = torch.relu(self.embed_a(a.unsqueeze(-1)))
        b_features = torch.relu(self.embed_b(b.unsqueeze(-1)))
        y = self.project_a(a_features.mean(dim=1)) + self.project_b(b_features.mean(dim=1))
        return y, a_features


def export_dynamic(cache: pathlib.Path):
    torch.manual_seed(SEED)
    dyncnn = seeded_batchnorm(DynCnn(), [(torch.randn(4, 3, 96, 128),) for _ in range(2)])
    export(dyncnn, (torch.randn(1, 3, 224, 224),), cache / 'dyn' / 'dyncnn.onnx', ['data'], ['logits', 'features'],
           dynamic_axes={'data': {2: 'H', 3: 'W'}, 'features': {2: 'H4', 3: 'W4'}}, keep_batchnorm=True)

    torch.manual_seed(SEED)
    two = TwoInputs().eval()
    export(two, (torch.randn(1, 224), torch.randn(1, 40)), cache / 'dyn' / 'two_inputs.onnx', ['a', 'b'],
           ['y', 'a_features'], dynamic_axes={'a': {1: 'L1'}, 'b': {1: 'L2'}, 'a_features': {1: 'L1'}})


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: export_models.py CACHE_DIR')
    cache = pathlib.Path(sys.argv[1])
    export_vision(cache)
    export_dynamic(cache)


if __name__ == '__main__':
    main()
