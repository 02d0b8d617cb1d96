"""GPT-2 in PCP against Hugging Face's GPT2LMHeadModel on the same weights, and the safetensors I/O."""
import numpy as np
import pytest

import pcp
from pcp.models import GPT2, GPT2Config
from pcp.serialization import load_safetensors, save_safetensors

transformers = pytest.importorskip("transformers", reason="transformers (test-only) is not installed")
torch = pytest.importorskip("torch", reason="PyTorch (test-only) is not installed")

CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


@pytest.fixture(scope="module")
def hf_model(tmp_path_factory):
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=97, n_positions=32, n_embd=48, n_layer=2, n_head=4,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, activation_function="gelu_new")
    model = transformers.GPT2LMHeadModel(cfg).eval()
    with torch.no_grad():  # non-trivial LayerNorm parameters and biases
        for name, p in model.named_parameters():
            if "ln" in name or name.endswith("bias"):
                p.add_(0.1 * torch.randn_like(p))
    path = tmp_path_factory.mktemp("hf_gpt2")
    model.save_pretrained(path, safe_serialization=True)
    return model, path


def test_logits_loss_and_gradients_match_hugging_face(hf_model):
    model, path = hf_model
    ours = GPT2.from_pretrained(str(path))
    assert ours.config.n_layer == 2 and ours.config.n_head == 4 and ours.config.vocab_size == 97
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 97, size=(3, 20))

    out = model(torch.tensor(idx), labels=torch.tensor(idx))
    out.loss.backward()
    logits, _ = ours(pcp.tensor(idx))
    # HF shifts the labels inside the model: position t predicts token t+1.
    loss = pcp.cross_entropy(logits[:, :-1], pcp.tensor(idx[:, 1:]))
    loss.backward()

    np.testing.assert_allclose(logits.numpy(), out.logits.detach().numpy(), atol=1e-4, rtol=0)
    assert abs(loss.item() - out.loss.item()) <= 1e-5
    hf_grads = {n[len("transformer."):] if n.startswith("transformer.") else n: p.grad.numpy()
                for n, p in model.named_parameters() if p.grad is not None}
    checked = 0
    for name, p in ours.named_parameters():
        ref = hf_grads[name].T if name.endswith(CONV1D) else hf_grads[name]
        got = p.grad.numpy()
        scale = np.abs(ref).max() + 1e-12
        assert np.abs(got - ref).max() / scale <= 1e-4, name
        checked += 1
    assert checked == len(list(ours.parameters())) == 2 + 2 + 2 * 12


@pytest.mark.parametrize("bias", [False, True])
def test_save_pretrained_loads_in_transformers_with_the_same_logits(tmp_path, bias):
    # A PCP model (without biases, as shakespeare-char's, or with) and its character tokenizer,
    # saved in Hugging Face's layout and loaded by transformers' own classes.
    from pcp.data import CharTokenizer
    text = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll: Speak, speak! 'tis é"
    tok = CharTokenizer.from_text(text)
    pcp.random.seed(0)
    ours = GPT2(GPT2Config(vocab_size=tok.vocab_size, n_positions=32, n_embd=48, n_layer=2, n_head=4, bias=bias))
    state = ours.state_dict()  # non-trivial LayerNorm gains and biases
    ours.load_state_dict({k: v + pcp.randn(v.shape) * 0.1 if "ln" in k or k.endswith("bias") else v
                          for k, v in state.items()})
    ours.save_pretrained(str(tmp_path), tokenizer=tok)
    hf = transformers.GPT2LMHeadModel.from_pretrained(str(tmp_path)).eval()
    idx = np.random.default_rng(0).integers(0, tok.vocab_size, size=(2, 20))
    logits = ours(pcp.tensor(idx))[0].numpy()
    np.testing.assert_allclose(hf(torch.tensor(idx)).logits.detach().numpy(), logits, atol=1e-5, rtol=0)
    np.testing.assert_array_equal(GPT2.from_pretrained(str(tmp_path))(pcp.tensor(idx))[0].numpy(), logits)
    hf_tok = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert hf_tok.encode(text) == tok.encode(text) and hf_tok.decode(tok.encode(text)) == text


def test_safetensors_round_trip_all_dtypes(tmp_path):
    rng = np.random.default_rng(1)
    tensors = {
        "f32": pcp.tensor(rng.standard_normal((3, 4)).astype(np.float32)),
        "f64": pcp.tensor(rng.standard_normal(5)),
        "f16": pcp.tensor(rng.standard_normal((2, 2)).astype(np.float16)),
        "bf16": pcp.tensor(rng.standard_normal(7).astype(np.float32)).astype(pcp.bfloat16),
        "i64": pcp.tensor(rng.integers(-5, 5, 6)),
        "i32": pcp.tensor(rng.integers(-5, 5, 6).astype(np.int32)),
        "b": pcp.tensor(np.array([True, False, True])),
        "empty": pcp.zeros((0, 3)),
    }
    path = tmp_path / "t.safetensors"
    save_safetensors(tensors, str(path), metadata={"step": 3})
    loaded, meta = load_safetensors(str(path))
    assert meta == {"step": "3"}
    assert set(loaded) == set(tensors)
    for k, t in tensors.items():
        assert loaded[k].dtype == t.dtype and tuple(loaded[k].shape) == tuple(t.shape), k
        np.testing.assert_array_equal(loaded[k].astype(pcp.float64).numpy(), t.astype(pcp.float64).numpy())
    # the file is readable by the reference implementation too
    st = pytest.importorskip("safetensors.torch")
    ref = st.load_file(str(path))
    np.testing.assert_array_equal(ref["f32"].numpy(), tensors["f32"].numpy())
    np.testing.assert_array_equal(ref["bf16"].float().numpy(), tensors["bf16"].astype(pcp.float32).numpy())


def test_corrupt_safetensors_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(b"\x01\x02")
    with pytest.raises(ValueError, match="too short"):
        load_safetensors(str(path))


def test_gpt2_config_validation_and_sequence_length():
    with pytest.raises(ValueError, match="divisible"):
        GPT2Config(n_embd=10, n_head=3)
    m = GPT2(GPT2Config(vocab_size=11, n_positions=8, n_embd=16, n_layer=1, n_head=2))
    with pytest.raises(ValueError, match="n_positions"):
        m(pcp.zeros((1, 9), pcp.int64))


def test_generate_is_seeded_and_extends_the_prompt():
    m = GPT2(GPT2Config(vocab_size=11, n_positions=8, n_embd=16, n_layer=1, n_head=2))
    prompt = pcp.tensor([[1, 2, 3]])
    pcp.random.seed(5)
    a = m.generate(prompt, 12, temperature=0.8, top_k=4).numpy()
    pcp.random.seed(5)
    b = m.generate(prompt, 12, temperature=0.8, top_k=4).numpy()
    assert a.shape == (1, 15)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[:, :3], [[1, 2, 3]])
    assert a.min() >= 0 and a.max() < 11
