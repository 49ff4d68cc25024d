# BsGenEx: an Elixir GenServer for the gen call tests; ping takes 2 ms.
defmodule BsGenEx do
  use GenServer

  def start, do: GenServer.start(__MODULE__, 0, name: __MODULE__)

  # N calls; {Count, P50, P99} in microseconds, as the caller saw them
  def run(n) do
    :bs_gen.quantiles(
      for _ <- 1..n do
        t0 = System.monotonic_time(:microsecond)
        :pong = GenServer.call(__MODULE__, :ping)
        System.monotonic_time(:microsecond) - t0
      end
    )
  end

  @impl true
  def init(n), do: {:ok, n}

  @impl true
  def handle_call(:ping, _from, n) do
    Process.sleep(2)
    {:reply, :pong, n + 1}
  end
end
