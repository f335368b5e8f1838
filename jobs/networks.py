"""The two BigDL networks the jobs train, with the criterion each one is trained with.

BigDL imports pyspark: on Python 3.11 the process needs the cloudpickle alias first (cluster/site/sitecustomize.py).
"""

from __future__ import annotations

from bigdl.dllib.nn.criterion import ClassNLLCriterion, CrossEntropyCriterion
from bigdl.dllib.nn.layer import (
    LSTM,
    BiRecurrent,
    InferReshape,
    JoinTable,
    Linear,
    LogSoftMax,
    Reshape,
    Select,
    Sequential,
    SpatialConvolution,
    SpatialMaxPooling,
    Tanh,
)

N_CLASSES = 10
ROW = 28  # an image row is one time step of 28 features; 28 rows are 28 time steps


def birnn(hidden_size: int = 128) -> tuple[Sequential, CrossEntropyCriterion]:
    """BigDL's bi-RNN tutorial network, as Marinos 2021 ran it.

    Rows as time steps -> BiRecurrent(JoinTable) around LSTM(28, hidden) -> last time
    step (Select(2, -1)) -> Linear(2 * hidden, 10); CrossEntropyCriterion applies the softmax.
    """
    recurrent = BiRecurrent(JoinTable(3, 3))
    recurrent.add(LSTM(ROW, hidden_size))
    model = Sequential()
    model.add(InferReshape([-1, ROW], True))  # (batch, 28 steps, 28 features)
    model.add(recurrent)
    model.add(Select(2, -1))
    model.add(Linear(2 * hidden_size, N_CLASSES))
    return model, CrossEntropyCriterion()


def lenet() -> tuple[Sequential, ClassNLLCriterion]:
    """LeNet-5 as in BigDL's MNIST example (tanh, max pooling, log-softmax output)."""
    model = Sequential()
    model.add(Reshape([1, ROW, ROW]))
    model.add(SpatialConvolution(1, 6, 5, 5))
    model.add(Tanh())
    model.add(SpatialMaxPooling(2, 2, 2, 2))
    model.add(SpatialConvolution(6, 12, 5, 5))
    model.add(Tanh())
    model.add(SpatialMaxPooling(2, 2, 2, 2))
    model.add(Reshape([12 * 4 * 4]))
    model.add(Linear(12 * 4 * 4, 100))
    model.add(Tanh())
    model.add(Linear(100, N_CLASSES))
    model.add(LogSoftMax())
    return model, ClassNLLCriterion()


NETWORKS = {"birnn": birnn, "lenet": lenet}
