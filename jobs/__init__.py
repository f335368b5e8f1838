"""jobs: BigDL (DLlib) training jobs run by spark-submit: a bidirectional RNN and LeNet-5 on MNIST."""
